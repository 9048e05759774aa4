// Tests of special files, relative-path checks, read limits, error texts
// and the write primitives.
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
