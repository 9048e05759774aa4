package safefs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
