package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteReplacesPrivatelyAndLeavesNothing: the target holds the new
// content, mode 0600, with the given time; no temporary file is left, also
// after a failed write (a missing directory).
func TestWriteReplacesPrivatelyAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := Write(path, []byte("new"), at); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("content %q, %v", got, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(at) {
		t.Fatalf("mode %v, time %v (%v)", fi.Mode().Perm(), fi.ModTime(), err)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), []byte("x"), time.Time{}); err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}
