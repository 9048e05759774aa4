package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretSetFromStdin: the secret is stored 0600 from stdin's first
// line, with the name before or after the flags (compose's entrypoint
// puts the flags first), and never printed.
func TestSecretSetFromStdin(t *testing.T) {
	for _, args := range [][]string{{"sync-password", "--dir", "D"}, {"--dir", "D", "sync-password"}} {
		dir := t.TempDir()
		for i := range args {
			if args[i] == "D" {
				args[i] = dir
			}
		}
		var out, errw bytes.Buffer
		if err := runSecretSet(args, strings.NewReader("pa ss wörd\nignored\n"), &out, &errw); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		p := filepath.Join(dir, "sync-password")
		b, err := os.ReadFile(p)
		if err != nil || string(b) != "pa ss wörd\n" {
			t.Fatalf("%v: stored %q, %v", args, b, err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
			t.Errorf("mode %04o", st.Mode().Perm())
		}
		if strings.Contains(out.String()+errw.String(), "wörd") {
			t.Errorf("the secret was printed: %s %s", out.String(), errw.String())
		}
		// LoadConfig reads back what was stored.
		cfg, cerr := LoadConfig(env{envTarget: "webdav", envURL: "https://h/d", envUser: "u"}.get, dir)
		if cerr != nil || cfg.password != "pa ss wörd" {
			t.Errorf("read back %q, %v", cfg.password, cerr)
		}
	}
}

func TestSecretSetRefusesUnknownNamesAndEmptyInput(t *testing.T) {
	dir := t.TempDir()
	if err := runSecretSet([]string{"joplin-token", "--dir", dir}, strings.NewReader("x\n"), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("stored a secret that is not a sync secret")
	}
	if err := runSecretSet([]string{"sync-password", "--dir", dir}, strings.NewReader("\n"), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("stored an empty secret")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
}

// TestSecretSetStoresTheEmbeddingsKey: the bridge's embeddings key is set
// the same way, and the answer says to restart the bridge, not Joplin.
func TestSecretSetStoresTheEmbeddingsKey(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := runSecretSet([]string{"embeddings-key", "--dir", dir}, strings.NewReader("sk-test-123\n"), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "embeddings-key"))
	if err != nil || string(b) != "sk-test-123\n" {
		t.Fatalf("stored %q, %v", b, err)
	}
	if !strings.Contains(out.String(), "docker compose restart bridge") || strings.Contains(out.String(), "sk-test") {
		t.Errorf("answer %q", out.String())
	}
}
