package safefs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"golang.org/x/sys/unix"
)

// tempBase returns a fresh temporary directory with every symlinked ancestor
// resolved. safefs.Open refuses any path that passes through a symlink, so
// on systems where the temp dir sits below one (macOS /var -> /private/var,
// a TMPDIR pointing through a link) the raw t.TempDir() path would be
// rejected for the wrong reason. On this machine /tmp is a real directory
// and EvalSymlinks is a no-op, but the tests must not depend on that.
func tempBase(t *testing.T) string {
	t.Helper()
	raw := t.TempDir()
	base, err := filepath.EvalSymlinks(raw)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// fixture holds the absolute paths that must never appear in an error
// message (requirement: errors name bundle-relative paths only).
type fixture struct {
	t    *testing.T
	base string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return &fixture{t: t, base: tempBase(t)}
}

// path joins base with a slash-separated relative path.
func (f *fixture) path(rel string) string { return filepath.Join(f.base, filepath.FromSlash(rel)) }

func (f *fixture) mkdir(rel string) string {
	f.t.Helper()
	p := f.path(rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) write(rel, content string) string {
	f.t.Helper()
	p := f.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) symlink(target, rel string) {
	f.t.Helper()
	if err := os.Symlink(target, f.path(rel)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) open(rel string) *safefs.Root {
	f.t.Helper()
	r, err := safefs.Open(f.path(rel))
	if err != nil {
		f.t.Fatalf("Open(%s): %v", rel, err)
	}
	f.t.Cleanup(func() { r.Close() })
	return r
}

// noLeak fails when err's message mentions the temp directory.
func (f *fixture) noLeak(err error) {
	f.t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if strings.Contains(msg, f.base) || strings.Contains(msg, os.TempDir()+"/") {
		f.t.Errorf("error message leaks an absolute path: %q", msg)
	}
}

// want asserts err is a *safefs.PathError with the given code and that its
// message carries no absolute path.
func (f *fixture) want(what string, err error, code string) {
	f.t.Helper()
	if err == nil {
		f.t.Errorf("%s: got nil error, want code %q", what, code)
		return
	}
	var pe *safefs.PathError
	if !errors.As(err, &pe) {
		f.t.Errorf("%s: got %T %v, want *safefs.PathError code %q", what, err, err, code)
		return
	}
	if pe.Code != code {
		f.t.Errorf("%s: code %q (%v), want %q", what, pe.Code, err, code)
	}
	if !safefs.IsCode(err, code) {
		f.t.Errorf("%s: IsCode(%q) false", what, code)
	}
	f.noLeak(err)
}

// snapshot records a directory tree without following symlinks:
// rel -> "dir", "link:<target>" or "file:<content>".
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link:" + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "file:" + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: tree changed: before %v after %v", what, before, after)
		return
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %q changed from %q to %q", what, k, v, after[k])
		}
	}
}

func TestCheckPath(t *testing.T) {
	tests := []struct {
		path string
		code string // "" = accepted
	}{
		{"", safefs.CodeNotAbsolute},
		{"rel", safefs.CodeNotAbsolute},
		{"rel/x", safefs.CodeNotAbsolute},
		{"./x", safefs.CodeNotAbsolute},
		{"../x", safefs.CodeNotAbsolute},
		{"/a/../b", safefs.CodeNotClean},
		{"/a/", safefs.CodeNotClean},
		{"/a//b", safefs.CodeNotClean},
		{"/a/.", safefs.CodeNotClean},
		{"/a/./b", safefs.CodeNotClean},
		{"//a", safefs.CodeNotClean},
		{"/..", safefs.CodeNotClean},
		{"/", ""},
		{"/a", ""},
		// CheckPath never touches the disk: a missing path is well-formed.
		{"/no/such/dir/anywhere", ""},
	}
	f := newFixture(t)
	for _, tc := range tests {
		err := safefs.CheckPath(tc.path)
		if tc.code == "" {
			if err != nil {
				t.Errorf("CheckPath(%q) = %v, want nil", tc.path, err)
			}
			continue
		}
		f.want("CheckPath("+tc.path+")", err, tc.code)
		// The shape errors do not echo the offending path back.
		if err != nil && tc.path != "" && strings.Contains(err.Error(), tc.path) {
			t.Errorf("CheckPath(%q) message echoes the path: %q", tc.path, err)
		}
	}
}

func TestOpenRejects(t *testing.T) {
	f := newFixture(t)
	f.mkdir("real/bundle")
	f.write("real/bundle/x.md", "inside")
	f.write("file.md", "a regular file")
	f.symlink(f.path("real/bundle"), "linkbundle") // 1: the bundle path itself is a symlink
	f.symlink(f.path("real"), "linkparent")        // 2: a symlinked ancestor (absolute target)
	f.symlink("real", "rellinkparent")             // 2: a symlinked ancestor (relative target)
	f.symlink(f.path("nowhere"), "dangling")       // a dangling symlink
	f.symlink(f.path("file.md"), "linkfile")       // symlink to a regular file
	tests := []struct {
		name, rel, code string
	}{
		{"bundle path is a symlink", "linkbundle", safefs.CodeSymlink},
		{"symlinked ancestor", "linkparent/bundle", safefs.CodeSymlink},
		{"relative symlinked ancestor", "rellinkparent/bundle", safefs.CodeSymlink},
		{"symlinked ancestor, missing leaf", "linkparent/missing", safefs.CodeSymlink},
		{"dangling symlink", "dangling", safefs.CodeSymlink},
		{"symlink to a file", "linkfile", safefs.CodeSymlink},
		{"missing", "missing", safefs.CodeNotFound},
		{"missing ancestor", "missing/bundle", safefs.CodeNotFound},
		{"regular file", "file.md", safefs.CodeNotDir},
		{"below a regular file", "file.md/x", safefs.CodeNotDir},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fixture{t: t, base: f.base}
			r, err := safefs.Open(f.path(tc.rel))
			if err == nil {
				r.Close()
			}
			f.want("Open", err, tc.code)
			var pe *safefs.PathError
			if errors.As(err, &pe) && pe.Rel != "" {
				t.Errorf("Open error names an ancestor: Rel=%q", pe.Rel)
			}
		})
	}
	// Shape errors come before any disk access.
	for _, p := range []string{"relative/path", f.base + "/", f.base + "/real/../real"} {
		_, err := safefs.Open(p)
		if !safefs.IsCode(err, safefs.CodeNotAbsolute) && !safefs.IsCode(err, safefs.CodeNotClean) {
			t.Errorf("Open(%q) = %v, want a shape error", p, err)
		}
		f.noLeak(err)
	}
	// The real path still opens.
	r := f.open("real/bundle")
	b, err := r.ReadFile("x.md", 100)
	if err != nil || string(b) != "inside" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	// "/" itself is a valid (if unwise) bundle path.
	root, err := safefs.Open("/")
	if err != nil {
		t.Fatalf("Open(/): %v", err)
	}
	root.Close()
}

// TestSymlinksInsideBundle covers symlinked files and directories met by
// every root-relative operation: each refuses and nothing changes at the
// symlink target.
func TestSymlinksInsideBundle(t *testing.T) {
	f := newFixture(t)
	outside := f.mkdir("outside")
	f.write("outside/x.md", "secret")
	f.mkdir("outside/sub")
	f.mkdir("bundle/dir")
	f.write("bundle/real.md", "real")
	f.symlink("real.md", "bundle/filelink.md")                 // relative link to a bundle file
	f.symlink(f.path("outside/x.md"), "bundle/abslink.md")     // absolute link to an outside file
	f.symlink(outside, "bundle/linkdir")                       // absolute link to an outside dir
	f.symlink("../../outside", "bundle/dir/rellinkdir")        // relative link to an outside dir
	f.symlink(f.path("outside/missing"), "bundle/dangling.md") // dangling link
	r := f.open("bundle")

	outsideBefore := snapshot(t, outside)
	bundleBefore := snapshot(t, f.path("bundle"))

	type op struct {
		name string
		run  func() error
		code string
	}
	closeF := func(fh *os.File, err error) error {
		if fh != nil {
			fh.Close()
		}
		return err
	}
	var ops []op
	for _, file := range []string{"filelink.md", "abslink.md", "dangling.md"} {
		ops = append(ops,
			op{"OpenFile " + file, func() error { fh, _, err := r.OpenFile(file); return closeF(fh, err) }, safefs.CodeSymlink},
			op{"ReadFile " + file, func() error { _, err := r.ReadFile(file, 1<<20); return err }, safefs.CodeSymlink},
			op{"OpenLockFile(create) " + file, func() error { return closeF(r.OpenLockFile(file, true)) }, safefs.CodeSymlink},
			op{"OpenLockFile " + file, func() error { return closeF(r.OpenLockFile(file, false)) }, safefs.CodeSymlink},
			op{"OpenDir " + file, func() error { return closeF(r.OpenDir(file)) }, safefs.CodeSymlink},
			op{"MkdirAll " + file, func() error { return r.MkdirAll(file) }, safefs.CodeSymlink},
			// O_EXCL never follows or replaces the link.
			op{"CreateExclusive " + file, func() error { return closeF(r.CreateExclusive(file, 0o644)) }, safefs.CodeExists},
		)
	}
	for _, dir := range []string{"linkdir", "dir/rellinkdir"} {
		ops = append(ops,
			op{"OpenDir " + dir, func() error { return closeF(r.OpenDir(dir)) }, safefs.CodeSymlink},
			op{"SyncDir " + dir, func() error { return r.SyncDir(dir) }, safefs.CodeSymlink},
			op{"OpenFile " + dir + "/x.md", func() error { fh, _, err := r.OpenFile(dir + "/x.md"); return closeF(fh, err) }, safefs.CodeSymlink},
			op{"ReadFile " + dir + "/x.md", func() error { _, err := r.ReadFile(dir+"/x.md", 1<<20); return err }, safefs.CodeSymlink},
			op{"Lstat " + dir + "/x.md", func() error { _, err := r.Lstat(dir + "/x.md"); return err }, safefs.CodeSymlink},
			op{"MkdirAll " + dir, func() error { return r.MkdirAll(dir) }, safefs.CodeSymlink},
			op{"MkdirAll " + dir + "/sub", func() error { return r.MkdirAll(dir + "/sub") }, safefs.CodeSymlink},
			op{"MkdirAll " + dir + "/new/deeper", func() error { return r.MkdirAll(dir + "/new/deeper") }, safefs.CodeSymlink},
			op{"WriteFileSynced " + dir + "/x.md", func() error { return r.WriteFileSynced(dir+"/x.md", []byte("pwned"), 0o644) }, safefs.CodeSymlink},
			op{"WriteFileSynced " + dir + "/new.md", func() error { return r.WriteFileSynced(dir+"/new.md", []byte("pwned"), 0o644) }, safefs.CodeSymlink},
			op{"WriteFileSynced " + dir + "/sub/new.md", func() error { return r.WriteFileSynced(dir+"/sub/new.md", []byte("pwned"), 0o644) }, safefs.CodeSymlink},
			op{"CreateExclusive " + dir + "/new.md", func() error { return closeF(r.CreateExclusive(dir+"/new.md", 0o644)) }, safefs.CodeSymlink},
			op{"OpenLockFile " + dir + "/lock", func() error { return closeF(r.OpenLockFile(dir+"/lock", true)) }, safefs.CodeSymlink},
			op{"OpenLockFile " + dir + "/x.md", func() error { return closeF(r.OpenLockFile(dir+"/x.md", false)) }, safefs.CodeSymlink},
			op{"Rename into " + dir, func() error { return r.Rename("real.md", dir+"/moved.md") }, safefs.CodeSymlink},
			op{"Rename out of " + dir, func() error { return r.Rename(dir+"/x.md", "stolen.md") }, safefs.CodeSymlink},
			op{"Remove " + dir + "/x.md", func() error { return r.Remove(dir + "/x.md") }, safefs.CodeSymlink},
			op{"RemoveDir " + dir + "/sub", func() error { return r.RemoveDir(dir + "/sub") }, safefs.CodeSymlink},
		)
	}
	for _, o := range ops {
		f.want(o.name, o.run(), o.code)
	}

	sameSnapshot(t, "outside dir", outsideBefore, snapshot(t, outside))
	sameSnapshot(t, "bundle", bundleBefore, snapshot(t, f.path("bundle")))

	// Lstat reports the link itself instead of following it.
	for _, rel := range []string{"filelink.md", "abslink.md", "linkdir", "dangling.md"} {
		st, err := r.Lstat(rel)
		if err != nil {
			t.Errorf("Lstat(%s): %v", rel, err)
		} else if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			t.Errorf("Lstat(%s) mode %o, want a symlink", rel, st.Mode)
		}
	}
}

// TestWriteOverFinalSymlink: writing to a name that is a symlink must never
// write through it; the link is either refused or replaced.
func TestWriteOverFinalSymlink(t *testing.T) {
	f := newFixture(t)
	outside := f.mkdir("outside")
	f.write("outside/x.md", "secret")
	f.mkdir("bundle")
	f.symlink(f.path("outside/x.md"), "bundle/link.md")
	r := f.open("bundle")
	before := snapshot(t, outside)
	err := r.WriteFileSynced("link.md", []byte("new"), 0o644)
	sameSnapshot(t, "outside dir", before, snapshot(t, outside))
	if err != nil {
		f.want("WriteFileSynced over a symlink", err, safefs.CodeSymlink)
		return
	}
	fi, lerr := os.Lstat(f.path("bundle/link.md"))
	if lerr != nil || !fi.Mode().IsRegular() {
		t.Fatalf("link.md after write: %v, %v; want a regular file replacing the link", fi, lerr)
	}
	if b, _ := r.ReadFile("link.md", 100); string(b) != "new" {
		t.Errorf("link.md = %q, want new", b)
	}
}

func TestWalkRefusesSymlinks(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fixture)
		rel   string
	}{
		{"file link", func(f *fixture) { f.symlink("a.md", "bundle/b.md") }, "b.md"},
		{"dir link", func(f *fixture) { f.symlink(f.path("outside"), "bundle/sub") }, "sub"},
		{"nested dir link", func(f *fixture) { f.mkdir("bundle/d"); f.symlink("../../outside", "bundle/d/l") }, "d/l"},
		{"dangling link", func(f *fixture) { f.symlink("nowhere", "bundle/zz.md") }, "zz.md"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("outside/x.md", "secret")
			f.write("bundle/a.md", "a")
			tc.setup(f)
			r := f.open("bundle")
			var seen []string
			err := r.Walk(safefs.WalkOptions{}, func(e safefs.Entry) error {
				seen = append(seen, e.Rel)
				return nil
			})
			f.want("Walk", err, safefs.CodeSymlink)
			var pe *safefs.PathError
			if errors.As(err, &pe) && pe.Rel != tc.rel {
				t.Errorf("Walk error Rel %q, want %q", pe.Rel, tc.rel)
			}
			for _, s := range seen {
				if strings.Contains(s, "x.md") {
					t.Errorf("Walk visited %q through a symlink", s)
				}
			}
		})
	}
}

// TestSwapAfterOpen: a directory replaced by a symlink after Open is refused.
func TestSwapAfterOpen(t *testing.T) {
	for _, target := range []string{"absolute", "relative"} {
		t.Run(target, func(t *testing.T) {
			f := newFixture(t)
			outside := f.mkdir("outside")
			f.write("outside/x.md", "outside secret")
			f.write("bundle/sub/x.md", "inside")
			f.write("bundle/a/b/c.md", "deep")
			r := f.open("bundle")
			if b, err := r.ReadFile("sub/x.md", 100); err != nil || string(b) != "inside" {
				t.Fatalf("before swap: %q, %v", b, err)
			}
			// Swap bundle/sub and bundle/a/b for symlinks to outside.
			if err := os.Rename(f.path("bundle/sub"), f.path("sub-away")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(f.path("bundle/a/b"), f.path("b-away")); err != nil {
				t.Fatal(err)
			}
			if target == "absolute" {
				f.symlink(outside, "bundle/sub")
				f.symlink(outside, "bundle/a/b")
			} else {
				f.symlink("../outside", "bundle/sub")
				f.symlink("../../outside", "bundle/a/b")
			}
			// Sanity: the OS would follow these links to outside/x.md.
			if b, err := os.ReadFile(f.path("bundle/sub/x.md")); err != nil || string(b) != "outside secret" {
				t.Fatalf("test setup: link does not reach outside: %q, %v", b, err)
			}
			before := snapshot(t, outside)

			_, err := r.ReadFile("sub/x.md", 100)
			f.want("ReadFile sub/x.md", err, safefs.CodeSymlink)
			_, err = r.ReadFile("a/b/x.md", 100)
			f.want("ReadFile a/b/x.md", err, safefs.CodeSymlink)
			f.want("WriteFileSynced sub/y.md", r.WriteFileSynced("sub/y.md", []byte("pwned"), 0o644), safefs.CodeSymlink)
			f.want("WriteFileSynced a/b/y.md", r.WriteFileSynced("a/b/y.md", []byte("pwned"), 0o644), safefs.CodeSymlink)
			f.want("MkdirAll sub/new", r.MkdirAll("sub/new"), safefs.CodeSymlink)
			fh, err := r.CreateExclusive("sub/z.md", 0o644)
			if fh != nil {
				fh.Close()
			}
			f.want("CreateExclusive sub/z.md", err, safefs.CodeSymlink)
			f.want("Rename into sub", r.Rename("a/b", "sub/b"), safefs.CodeSymlink)
			f.want("Remove sub/x.md", r.Remove("sub/x.md"), safefs.CodeSymlink)
			f.want("Walk", r.Walk(safefs.WalkOptions{}, func(safefs.Entry) error { return nil }), safefs.CodeSymlink)

			sameSnapshot(t, "outside dir", before, snapshot(t, outside))
			if _, err := os.Lstat(filepath.Join(outside, "y.md")); !os.IsNotExist(err) {
				t.Errorf("outside/y.md exists or lstat failed: %v", err)
			}
		})
	}
}

// TestRootSwappedAfterOpen: the pinned root keeps acting on the original
// directory even when its path now names a symlink elsewhere.
func TestRootSwappedAfterOpen(t *testing.T) {
	f := newFixture(t)
	f.write("bundle/orig.md", "original")
	f.mkdir("bundle/d")
	target := f.mkdir("target")
	f.write("target/orig.md", "decoy")
	f.mkdir("target/d")
	r := f.open("bundle")

	if err := os.Rename(f.path("bundle"), f.path("moved")); err != nil {
		t.Fatal(err)
	}
	f.symlink(target, "bundle")
	targetBefore := snapshot(t, target)

	if b, err := r.ReadFile("orig.md", 100); err != nil || string(b) != "original" {
		t.Errorf("ReadFile after swap = %q, %v; want the pinned original", b, err)
	}
	if err := r.WriteFileSynced("new.md", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAll("d/e"); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFileSynced("d/e/deep.md", []byte("deep"), 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := r.CreateExclusive("excl.md", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if err := r.Rename("orig.md", "d/renamed.md"); err != nil {
		t.Fatal(err)
	}
	var walked []string
	if err := r.Walk(safefs.WalkOptions{}, func(e safefs.Entry) error { walked = append(walked, e.Rel); return nil }); err != nil {
		t.Fatal(err)
	}
	wantWalk := []string{"d/e/deep.md", "d/renamed.md", "excl.md", "new.md"}
	if strings.Join(walked, ",") != strings.Join(wantWalk, ",") {
		t.Errorf("Walk after swap = %v, want %v", walked, wantWalk)
	}

	for rel, want := range map[string]string{"new.md": "new", "d/e/deep.md": "deep", "d/renamed.md": "original", "excl.md": ""} {
		b, err := os.ReadFile(f.path("moved/" + rel))
		if err != nil || string(b) != want {
			t.Errorf("moved/%s = %q, %v; want %q", rel, b, err, want)
		}
	}
	sameSnapshot(t, "symlink target", targetBefore, snapshot(t, target))

	// A fresh Open of the path now refuses the symlink.
	_, err = safefs.Open(f.path("bundle"))
	f.want("Open swapped path", err, safefs.CodeSymlink)
}

// mkfifo creates a FIFO, skipping the test where that is impossible.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// within runs fn and fails the test if it has not returned within d
// (opening a FIFO without O_NONBLOCK would block forever).
func within(t *testing.T, what string, d time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s blocked for %v", what, d)
		return nil
	}
}

func TestFIFO(t *testing.T) {
	f := newFixture(t)
	f.write("bundle/a.md", "a")
	f.mkdir("bundle/sub")
	mkfifo(t, f.path("bundle/sub/pipe.md"))
	r := f.open("bundle")
	// If a test below hangs on the FIFO, opening its write end releases the
	// blocked reader so the goroutine can finish; do that on cleanup.
	t.Cleanup(func() {
		if w, err := os.OpenFile(f.path("bundle/sub/pipe.md"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	const limit = 5 * time.Second
	closeF := func(fh *os.File, err error) error {
		if fh != nil {
			fh.Close()
		}
		return err
	}
	ops := []struct {
		name string
		run  func() error
	}{
		{"ReadFile", func() error { _, err := r.ReadFile("sub/pipe.md", 1<<20); return err }},
		{"OpenFile", func() error { fh, _, err := r.OpenFile("sub/pipe.md"); return closeF(fh, err) }},
		{"OpenLockFile", func() error { return closeF(r.OpenLockFile("sub/pipe.md", false)) }},
		{"OpenLockFile(create)", func() error { return closeF(r.OpenLockFile("sub/pipe.md", true)) }},
		{"Walk", func() error { return r.Walk(safefs.WalkOptions{}, func(safefs.Entry) error { return nil }) }},
	}
	for _, o := range ops {
		err := within(t, o.name, limit, o.run)
		f.want(o.name, err, safefs.CodeNotRegular)
	}
	var pe *safefs.PathError
	err := within(t, "Walk", limit, func() error {
		return r.Walk(safefs.WalkOptions{}, func(safefs.Entry) error { return nil })
	})
	if errors.As(err, &pe) && pe.Rel != "sub/pipe.md" {
		t.Errorf("Walk FIFO error Rel = %q", pe.Rel)
	}
	// A directory is not a regular file either.
	_, err = r.ReadFile("sub", 100)
	f.want("ReadFile dir", err, safefs.CodeNotRegular)
}

func TestSplitRel(t *testing.T) {
	f := newFixture(t)
	long255 := strings.Repeat("a", 255)
	reject := []string{
		"", "/x", "/", "a//b", "a/", "../x", "a/..", "..", ".", "./a", "a/./b",
		"a\\b", "a\x00b", "\x00", "a/" + long255 + "b",
	}
	for _, rel := range reject {
		parts, err := safefs.SplitRel(rel)
		f.want("SplitRel("+printable(rel)+")", err, safefs.CodeBadPath)
		if parts != nil {
			t.Errorf("SplitRel(%q) returned parts %q with an error", rel, parts)
		}
		if err != nil && strings.ContainsRune(err.Error(), 0) {
			t.Errorf("SplitRel(%q) message contains NUL", rel)
		}
	}
	accept := map[string][]string{
		"a":           {"a"},
		"a/b.md":      {"a", "b.md"},
		".okf/x":      {".okf", "x"},
		"...":         {"..."},
		"a/..b/c.":    {"a", "..b", "c."},
		"café/crème":  {"café", "crème"},
		long255:       {long255},
		"x y/z~+@.md": {"x y", "z~+@.md"},
	}
	for rel, want := range accept {
		parts, err := safefs.SplitRel(rel)
		if err != nil || strings.Join(parts, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("SplitRel(%q) = %q, %v; want %q", rel, parts, err, want)
		}
	}
}

func printable(s string) string { return strings.ReplaceAll(s, "\x00", `\x00`) }

// TestBadRelEverywhere: every root-relative operation validates rel.
func TestBadRelEverywhere(t *testing.T) {
	f := newFixture(t)
	f.write("bundle/a.md", "a")
	f.write("secret.md", "secret")
	r := f.open("bundle")
	closeF := func(fh *os.File, err error) error {
		if fh != nil {
			fh.Close()
		}
		return err
	}
	for _, rel := range []string{"../secret.md", f.path("secret.md"), "a/../../secret.md", "./a.md", "a\\b"} {
		ops := map[string]func() error{
			"ReadFile":        func() error { _, err := r.ReadFile(rel, 100); return err },
			"OpenFile":        func() error { fh, _, err := r.OpenFile(rel); return closeF(fh, err) },
			"Lstat":           func() error { _, err := r.Lstat(rel); return err },
			"OpenDir":         func() error { return closeF(r.OpenDir(rel)) },
			"MkdirAll":        func() error { return r.MkdirAll(rel) },
			"WriteFileSynced": func() error { return r.WriteFileSynced(rel, []byte("x"), 0o644) },
			"CreateExclusive": func() error { return closeF(r.CreateExclusive(rel, 0o644)) },
			"OpenLockFile":    func() error { return closeF(r.OpenLockFile(rel, true)) },
			"Remove":          func() error { return r.Remove(rel) },
			"RemoveDir":       func() error { return r.RemoveDir(rel) },
			"Rename from":     func() error { return r.Rename(rel, "b.md") },
			"Rename to":       func() error { return r.Rename("a.md", rel) },
		}
		for name, op := range ops {
			err := op()
			// The absolute path form must not be echoed back either.
			f.want(name+"("+rel+")", err, safefs.CodeBadPath)
		}
	}
	if b, err := os.ReadFile(f.path("secret.md")); err != nil || string(b) != "secret" {
		t.Errorf("secret.md changed: %q, %v", b, err)
	}
	if b, err := os.ReadFile(f.path("bundle/a.md")); err != nil || string(b) != "a" {
		t.Errorf("a.md changed: %q, %v", b, err)
	}
}

func TestReadFileLimits(t *testing.T) {
	f := newFixture(t)
	f.write("bundle/ten.md", "0123456789")
	f.write("bundle/empty.md", "")
	r := f.open("bundle")
	tests := []struct {
		rel  string
		max  int64
		want string
		code string
	}{
		{"ten.md", 10, "0123456789", ""},
		{"ten.md", 11, "0123456789", ""},
		{"ten.md", 9, "", safefs.CodeTooLarge},
		{"ten.md", 0, "", safefs.CodeTooLarge},
		{"empty.md", 0, "", ""},
		{"missing.md", 10, "", safefs.CodeNotFound},
		{"nodir/missing.md", 10, "", safefs.CodeNotFound},
		{"ten.md/x", 10, "", safefs.CodeNotDir},
	}
	for _, tc := range tests {
		b, err := r.ReadFile(tc.rel, tc.max)
		if tc.code != "" {
			f.want("ReadFile("+tc.rel+")", err, tc.code)
			continue
		}
		if err != nil || string(b) != tc.want {
			t.Errorf("ReadFile(%s, %d) = %q, %v; want %q", tc.rel, tc.max, b, err, tc.want)
		}
	}
	_, err := r.Lstat("missing.md")
	f.want("Lstat missing", err, safefs.CodeNotFound)
	_, err = r.OpenDir("missing")
	f.want("OpenDir missing", err, safefs.CodeNotFound)
	_, err = r.OpenDir("ten.md")
	f.want("OpenDir file", err, safefs.CodeNotDir)

	var pe *safefs.PathError
	_, err = r.ReadFile("nodir/missing.md", 10)
	if errors.As(err, &pe) && pe.Rel != "nodir" {
		t.Errorf("missing parent error Rel = %q, want nodir", pe.Rel)
	}

	d, err := r.OpenDir("")
	if err != nil {
		t.Fatalf("OpenDir(\"\"): %v", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	sort.Strings(names)
	if err != nil || strings.Join(names, ",") != "empty.md,ten.md" {
		t.Errorf("root listing = %v, %v", names, err)
	}
}

// TestErrorMessagesAreRelative renders each error code and checks the
// message never includes anything but the bundle-relative name.
func TestErrorMessagesAreRelative(t *testing.T) {
	for _, code := range []string{
		safefs.CodeNotAbsolute, safefs.CodeNotClean, safefs.CodeSymlink, safefs.CodeNotDir,
		safefs.CodeNotFound, safefs.CodeNotRegular, safefs.CodeBadPath, safefs.CodeTooLarge,
		safefs.CodeExists, safefs.CodeIO,
	} {
		for _, rel := range []string{"", "a/b.md"} {
			inner := &os.PathError{Op: "open", Path: "/secret/abs/path", Err: unix.EACCES}
			e := &safefs.PathError{Code: code, Rel: rel, Err: inner}
			msg := e.Error()
			if strings.Contains(msg, "/secret") {
				t.Errorf("code %s: message %q leaks the wrapped path", code, msg)
			}
			if msg == "" {
				t.Errorf("code %s: empty message", code)
			}
			if !errors.Is(e, unix.EACCES) {
				t.Errorf("code %s: errors.Is(EACCES) false", code)
			}
		}
	}
	e := &safefs.PathError{Code: safefs.CodeIO, Rel: "x", Err: unix.EIO}
	if !strings.Contains(e.Error(), unix.EIO.Error()) {
		t.Errorf("io message %q lacks the errno text", e.Error())
	}
	if safefs.IsCode(errors.New("plain"), safefs.CodeIO) || safefs.IsCode(nil, safefs.CodeIO) {
		t.Error("IsCode true for a non-PathError")
	}
}

func TestWriteFileSynced(t *testing.T) {
	f := newFixture(t)
	f.mkdir("bundle")
	r := f.open("bundle")
	if err := r.MkdirAll("a/b"); err != nil {
		t.Fatal(err)
	}
	for i, content := range []string{"v1", "version two, longer", ""} {
		if err := r.WriteFileSynced("a/b/c.md", []byte(content), 0o600); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		b, err := os.ReadFile(f.path("bundle/a/b/c.md"))
		if err != nil || string(b) != content {
			t.Fatalf("write %d: on disk %q, %v; want %q", i, b, err, content)
		}
	}
	st, err := r.Lstat("a/b/c.md")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o777 != 0o600 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Errorf("mode %o, want regular 0600", st.Mode)
	}
	f.want("write into missing dir", r.WriteFileSynced("nodir/x.md", []byte("x"), 0o644), safefs.CodeNotFound)
	if err := r.WriteFileSynced("top.md", []byte("top"), 0o644); err != nil {
		t.Fatal(err)
	}
	noTemps(t, f.path("bundle"))
}

// noTemps fails if any ".*.tmp-*" file is left anywhere below dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		if ok, _ := filepath.Match(".*.tmp-*", d.Name()); ok {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

// TestWriteFileSyncedAtomic: a concurrent reader sees exactly the old or
// the new content, never a mix, a truncation or a missing file.
func TestWriteFileSyncedAtomic(t *testing.T) {
	f := newFixture(t)
	f.mkdir("bundle")
	r := f.open("bundle")
	a := bytes.Repeat([]byte("A"), 64<<10)
	b := bytes.Repeat([]byte("B"), 16<<10)
	if err := r.WriteFileSynced("x.md", a, 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad []string
	var mu sync.Mutex
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := r.ReadFile("x.md", 1<<20)
				if err == nil && (bytes.Equal(got, a) || bytes.Equal(got, b)) {
					continue
				}
				mu.Lock()
				if len(bad) < 5 {
					bad = append(bad, printable(string(got[:min(len(got), 20)]))+" err="+errString(err))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range 100 {
		data := a
		if i%2 == 0 {
			data = b
		}
		if err := r.WriteFileSynced("x.md", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("readers saw torn or missing content: %v", bad)
	}
	noTemps(t, f.path("bundle"))
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestRenameRemoveCreate(t *testing.T) {
	f := newFixture(t)
	f.write("bundle/a/f.md", "f")
	f.write("bundle/a/g.md", "g")
	f.mkdir("bundle/b")
	f.mkdir("bundle/emptydir")
	f.write("bundle/full/x.md", "x")
	r := f.open("bundle")

	// Rename across directories.
	if err := r.Rename("a/f.md", "b/moved.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(f.path("bundle/a/f.md")); !os.IsNotExist(err) {
		t.Errorf("source still present: %v", err)
	}
	if b, err := os.ReadFile(f.path("bundle/b/moved.md")); err != nil || string(b) != "f" {
		t.Errorf("destination = %q, %v", b, err)
	}
	// Rename within a directory, replacing an existing file.
	if err := r.Rename("b/moved.md", "a/g.md"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f.path("bundle/a/g.md")); string(b) != "f" {
		t.Errorf("replaced file = %q, want f", b)
	}
	// Rename a directory to the root level.
	if err := r.Rename("b", "c"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f.path("bundle/c")); err != nil || !fi.IsDir() {
		t.Errorf("renamed dir: %v, %v", fi, err)
	}
	f.want("Rename missing", r.Rename("a/missing.md", "a/x.md"), safefs.CodeNotFound)
	f.want("Rename missing parent", r.Rename("nodir/x.md", "a/x.md"), safefs.CodeNotFound)
	f.want("Rename into missing dir", r.Rename("a/g.md", "nodir/x.md"), safefs.CodeNotFound)
	if _, err := os.Lstat(f.path("bundle/a/g.md")); err != nil {
		t.Errorf("failed rename moved the source: %v", err)
	}

	// Remove.
	for _, rel := range []string{"a/missing.md", "nodir/missing.md", "missing.md"} {
		if err := r.Remove(rel); err != nil {
			t.Errorf("Remove(%s) = %v, want nil", rel, err)
		}
	}
	if err := r.Remove("a/g.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(f.path("bundle/a/g.md")); !os.IsNotExist(err) {
		t.Errorf("Remove left the file: %v", err)
	}
	f.want("Remove dir", r.Remove("emptydir"), safefs.CodeIO)
	f.want("Remove below a file", r.Remove("full/x.md/y"), safefs.CodeNotDir)
	// RemoveDir.
	if err := r.RemoveDir("missingdir"); err != nil {
		t.Errorf("RemoveDir missing = %v", err)
	}
	if err := r.RemoveDir("emptydir"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(f.path("bundle/emptydir")); !os.IsNotExist(err) {
		t.Errorf("RemoveDir left the dir: %v", err)
	}
	f.want("RemoveDir non-empty", r.RemoveDir("full"), safefs.CodeIO)

	// CreateExclusive.
	fh, err := r.CreateExclusive("new.md", 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("created"); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	fh, err = r.CreateExclusive("new.md", 0o640)
	if fh != nil {
		fh.Close()
	}
	f.want("CreateExclusive existing", err, safefs.CodeExists)
	if b, _ := os.ReadFile(f.path("bundle/new.md")); string(b) != "created" {
		t.Errorf("existing file changed: %q", b)
	}
	fh, err = r.CreateExclusive("nodir/new.md", 0o640)
	if fh != nil {
		fh.Close()
	}
	f.want("CreateExclusive missing dir", err, safefs.CodeNotFound)

	// OpenLockFile.
	fh, err = r.OpenLockFile("lock", false)
	if fh != nil {
		fh.Close()
	}
	f.want("OpenLockFile missing", err, safefs.CodeNotFound)
	if _, err := os.Lstat(f.path("bundle/lock")); !os.IsNotExist(err) {
		t.Errorf("OpenLockFile(create=false) created the file: %v", err)
	}
	fh, err = r.OpenLockFile("lock", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(fh.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("flock: %v", err)
	}
	fh.Close()
	fh, err = r.OpenLockFile("lock", false)
	if err != nil {
		t.Fatalf("OpenLockFile existing: %v", err)
	}
	fh.Close()
	fh, err = r.OpenLockFile("c", false)
	if fh != nil {
		fh.Close()
	}
	f.want("OpenLockFile dir", err, safefs.CodeNotRegular)

	// MkdirAll over a file, and idempotence.
	f.want("MkdirAll over a file", r.MkdirAll("new.md/sub"), safefs.CodeNotDir)
	for range 2 {
		if err := r.MkdirAll("m/n/o"); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(f.path("bundle/m/n/o")); err != nil || !fi.IsDir() {
		t.Errorf("MkdirAll result: %v, %v", fi, err)
	}
	if err := r.SyncDir(""); err != nil {
		t.Errorf("SyncDir root: %v", err)
	}
	if err := r.SyncDir("m/n"); err != nil {
		t.Errorf("SyncDir m/n: %v", err)
	}
	noTemps(t, f.path("bundle"))
}

// TestFDIsPinned checks FD and Close behave and do not leak descriptors
// over many operations.
func TestNoDescriptorLeak(t *testing.T) {
	f := newFixture(t)
	f.write("bundle/a/b/c.md", "c")
	r := f.open("bundle")
	if r.FD() < 0 {
		t.Fatalf("FD = %d", r.FD())
	}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(ents)
	}
	before := count()
	for range 50 {
		r.ReadFile("a/b/c.md", 100)
		r.ReadFile("a/missing/c.md", 100)
		r.ReadFile("a/b/c.md/x", 100)
		r.Lstat("a/b/c.md")
		r.MkdirAll("a/b/d")
		r.WriteFileSynced("a/b/w.md", []byte("w"), 0o644)
		r.Remove("a/b/w.md")
		r.Walk(safefs.WalkOptions{}, func(safefs.Entry) error { return nil })
		r.Walk(safefs.WalkOptions{}, func(safefs.Entry) error { return safefs.ErrStop })
		r.Walk(safefs.WalkOptions{MaxDepth: 1}, func(safefs.Entry) error { return nil })
	}
	if after := count(); after > before+2 {
		t.Errorf("descriptors grew from %d to %d", before, after)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
