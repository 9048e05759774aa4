package bearer

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// withClockAndReads moves the package clock by shift and counts file reads
// for the rest of the test.
func withClockAndReads(t *testing.T, shift time.Duration) *atomic.Int64 {
	oldNow, oldRead := now, readFile
	var reads atomic.Int64
	now = func() time.Time { return time.Now().Add(shift) }
	readFile = func(p string) ([]byte, error) { reads.Add(1); return os.ReadFile(p) }
	t.Cleanup(func() { now, readFile = oldNow, oldRead })
	return &reads
}

func peeredTokenFile(t *testing.T) (tf *TokenFile, own, peer string) {
	dir := t.TempDir()
	own, peer = filepath.Join(dir, "actions"), filepath.Join(dir, "mcp")
	for p, tok := range map[string]string{own: actionsTok, peer: mcpTok} {
		if err := os.WriteFile(p, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tf, err := NewTokenFile(own)
	if err != nil {
		t.Fatal(err)
	}
	return tf.DistinctFrom("actions", nil, Credential{Name: "mcp", Path: peer}), own, peer
}

// TestUnchangedFilesAreNotReRead: past the racy window, a check of files
// whose stat is unchanged reuses the last outcome without reading them.
func TestUnchangedFilesAreNotReRead(t *testing.T) {
	reads := withClockAndReads(t, time.Hour)
	tf, _, _ := peeredTokenFile(t)
	if err := tf.Check(bearerHeader(actionsTok)); err != nil {
		t.Fatal(err)
	}
	before := reads.Load()
	for range 3 {
		if err := tf.Check(bearerHeader(actionsTok)); err != nil {
			t.Fatal(err)
		}
		if err := tf.Check(bearerHeader(mcpTok)); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("a wrong token: %v", err)
		}
	}
	if n := reads.Load() - before; n != 0 {
		t.Fatalf("%d file reads for checks of unchanged files, want 0", n)
	}
}

// TestChangedFilesAreReRead: a rotation of the file or a peer changes its
// stat, so the next check reads again, even past the racy window.
func TestChangedFilesAreReRead(t *testing.T) {
	withClockAndReads(t, time.Hour)
	tf, own, peer := peeredTokenFile(t)
	if err := tf.Check(bearerHeader(actionsTok)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(peer, []byte(actionsTok), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tf.Check(bearerHeader(actionsTok)); !errors.Is(err, ErrCredentialConflict) {
		t.Fatalf("after a peer rotated into a collision: %v, want ErrCredentialConflict", err)
	}
	if err := os.WriteFile(peer, []byte(mcpTok), 0o600); err != nil {
		t.Fatal(err)
	}
	const rotated = "actions-token-rotated-0123456789"
	if err := os.WriteFile(own, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tf.Check(bearerHeader(rotated)); err != nil {
		t.Fatalf("the rotated token: %v", err)
	}
	if err := tf.Check(bearerHeader(actionsTok)); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("the old token after rotation: %v", err)
	}
}

// TestRecentlyChangedFilesAreAlwaysRead: within the racy window a rewrite
// could keep the same stat, so nothing is reused.
func TestRecentlyChangedFilesAreAlwaysRead(t *testing.T) {
	reads := withClockAndReads(t, 0)
	tf, _, _ := peeredTokenFile(t)
	for range 3 {
		if err := tf.Check(bearerHeader(actionsTok)); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads.Load(); n != 6 {
		t.Fatalf("%d file reads for 3 checks of fresh files, want 6 (the file and its peer each time)", n)
	}
}
