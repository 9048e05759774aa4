package fwatch_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/notebridge/notebridge/pkg/okf/fwatch"
)

// watched returns a directory with a file and a subdirectory, and a watch
// following both directories (added the way a walk adds them).
func watched(t *testing.T) (dir string, w *fwatch.Watch) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("alpha"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "b.md"), []byte("beta"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if !fwatch.Supported(int(root.Fd())) {
		t.Skipf("%s is not on a filesystem that reports every change to inotify", dir)
	}
	w, err = fwatch.New(int(root.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		f, err := os.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddDir(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if w.Changed() {
		t.Fatal("a fresh watch reports a change")
	}
	return dir, w
}

// TestChangedSeesEveryKindOfChange: each change a listing or a read of a
// concept would notice is reported as soon as its system call returned.
func TestChangedSeesEveryKindOfChange(t *testing.T) {
	changes := map[string]func(dir string) error{
		"rewrite a file":            func(d string) error { return os.WriteFile(filepath.Join(d, "a.md"), []byte("ALPHA"), 0o644) },
		"rewrite a nested file":     func(d string) error { return os.WriteFile(filepath.Join(d, "sub", "b.md"), []byte("BETA"), 0o644) },
		"change a file's mode":      func(d string) error { return os.Chmod(filepath.Join(d, "a.md"), 0o600) },
		"create a file":             func(d string) error { return os.WriteFile(filepath.Join(d, "c.md"), nil, 0o644) },
		"delete a nested file":      func(d string) error { return os.Remove(filepath.Join(d, "sub", "b.md")) },
		"rename a file in":          func(d string) error { return os.Rename(filepath.Join(d, "a.md"), filepath.Join(d, "sub", "a.md")) },
		"create a directory":        func(d string) error { return os.Mkdir(filepath.Join(d, "new"), 0o755) },
		"rename a directory away":   func(d string) error { return os.Rename(filepath.Join(d, "sub"), filepath.Join(d, "moved")) },
		"create a hidden temp file": func(d string) error { return os.WriteFile(filepath.Join(d, ".tmp"), nil, 0o644) },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			dir, w := watched(t)
			if err := change(dir); err != nil {
				t.Fatal(err)
			}
			if !w.Changed() {
				t.Fatal("the change was not reported")
			}
			if !w.Changed() {
				t.Fatal("Changed is not sticky")
			}
		})
	}
}

// TestOnlyFollowedDirectoriesReport states AddDir's contract: a directory
// the walk did not add raises nothing, which is why a walk adds every one.
func TestOnlyFollowedDirectoriesReport(t *testing.T) {
	dir, w := watched(t)
	other := filepath.Join(dir, "sub", "deeper")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if !w.Changed() {
		t.Fatal("creating a directory in a watched one was not reported")
	}
	_, w2 := watched(t)
	if err := os.WriteFile(filepath.Join(t.TempDir(), "x.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if w2.Changed() {
		t.Fatal("a change outside the watched directories was reported")
	}
}

// TestBrokenOrClosedWatchReportsChange: a watch that could not follow a
// directory, or was closed, never vouches for a listing.
func TestBrokenOrClosedWatchReportsChange(t *testing.T) {
	_, w := watched(t)
	if err := w.AddDir(-1); err == nil {
		t.Fatal("AddDir of a bad descriptor succeeded")
	}
	if !w.Changed() {
		t.Fatal("a watch missing a directory vouches for the listing")
	}
	_, w2 := watched(t)
	w2.Close()
	if !w2.Changed() {
		t.Fatal("a closed watch vouches for the listing")
	}
}
