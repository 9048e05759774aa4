package bearer

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCheckWithPeers is the per-request cost of authenticating against
// a token file that must stay distinct from two peer credential files, as
// the Actions surface does.
func BenchmarkCheckWithPeers(b *testing.B) {
	dir := b.TempDir()
	for name, tok := range map[string]string{"actions-token": actionsTok, "mcp-token": mcpTok, "joplin-token": joplinTok} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(tok), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	tf, err := NewTokenFile(filepath.Join(dir, "actions-token"))
	if err != nil {
		b.Fatal(err)
	}
	tf = tf.DistinctFrom("actions", nil,
		Credential{Name: "mcp", Path: filepath.Join(dir, "mcp-token")},
		Credential{Name: "joplin", Path: filepath.Join(dir, "joplin-token")})
	// Token files change rarely: look at them from past the racy window.
	defer func(old func() time.Time) { now = old }(now)
	now = func() time.Time { return time.Now().Add(time.Hour) }
	h := bearerHeader(actionsTok)
	b.ReportAllocs()
	for b.Loop() {
		if err := tf.Check(h); err != nil {
			b.Fatal(err)
		}
	}
}
