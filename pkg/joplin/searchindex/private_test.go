package searchindex

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestIndexFilesArePrivate: a new index and its -wal and -shm files are
// 0600, and an index made 0644 before is made 0600 when opened.
func TestIndexFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "index.db")
	ix, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, ix)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", filepath.Base(p), fi.Mode(), err)
		}
	}
	ix.Close()
	os.Chmod(path, 0o644)
	ix, err = Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("an older 0644 index stays %v", fi.Mode())
	}
}

// TestInterruptedCreateLeavesNoPartialIndex: a create that stops half-way
// (here: its context ends) leaves no file under the index's name, and a
// leftover of it under the temporary name is neither opened nor set aside.
func TestInterruptedCreateLeavesNoPartialIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	os.WriteFile(path+".new", []byte("half-written"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, path); err == nil {
		t.Fatal("Open with an ended context succeeded")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an interrupted create left %s: %v", filepath.Base(path), err)
	}
	ix, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open after an interrupted create: %v", err)
	}
	ix.Close()
	if _, err := os.Stat(path + ".bad"); !os.IsNotExist(err) {
		t.Errorf("an index was set aside: %v", err)
	}
}
