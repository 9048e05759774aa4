package okftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOwnBundles: the embedded tree holds exactly the listed bundles, and
// a copy is byte-identical to it.
func TestOwnBundles(t *testing.T) {
	got := MustBundles(t, Own(), len(OwnBundles))
	if !slices.Equal(got, OwnBundles) {
		t.Fatalf("own bundles %v, want %v", got, OwnBundles)
	}
	for _, name := range OwnBundles {
		dir := Copy(t, Own(), name)
		if filepath.Base(dir) != filepath.Base(name) {
			t.Fatalf("copy of %s is at %s", name, dir)
		}
		n := 0
		for _, f := range MarkdownFiles(t, Own()) {
			rel, ok := strings.CutPrefix(f.Rel, name+"/")
			if !ok {
				continue
			}
			n++
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil || string(b) != string(f.Data) {
				t.Fatalf("%s: copy differs (%v)", f.Rel, err)
			}
		}
		if n < 4 {
			t.Fatalf("%s: only %d Markdown files", name, n)
		}
	}
}

// TestAuthorsDirChecks: a conformance run that was asked for fails on a
// directory it cannot use, and accepts a real bundle tree.
func TestAuthorsDirChecks(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	unreadable := filepath.Join(tmp, "unreadable")
	os.MkdirAll(filepath.Join(unreadable, "v0.1"), 0o755)
	os.Chmod(filepath.Join(unreadable, "v0.1"), 0o000)
	t.Cleanup(func() { os.Chmod(filepath.Join(unreadable, "v0.1"), 0o755) })
	for name, dir := range map[string]string{
		"empty value": "",
		"relative":    "shared/fixtures/okf",
		"missing":     filepath.Join(tmp, "missing"),
		"a file":      file,
		"no bundles":  empty,
	} {
		if _, err := authorsFS(dir); err == nil {
			t.Errorf("%s (%q): accepted", name, dir)
		}
	}
	if os.Geteuid() != 0 {
		if _, err := authorsFS(unreadable); err == nil {
			t.Error("an unreadable profile directory was accepted")
		}
	}
	good := filepath.Join(tmp, "good")
	os.MkdirAll(filepath.Join(good, "v0.2-date", "b"), 0o755)
	fsys, err := authorsFS(good)
	if err != nil {
		t.Fatalf("a bundle tree was refused: %v", err)
	}
	if got := MustBundles(t, fsys, 1); !slices.Equal(got, []string{"v0.2-date/b"}) {
		t.Fatalf("bundles %v", got)
	}
}

// TestAuthorsChild calls Authors; TestAuthorsSkipOrFail runs it in a child
// process under each setting of Env.
func TestAuthorsChild(t *testing.T) {
	if os.Getenv("OKFTEST_CHILD") != "1" {
		t.Skip("run by TestAuthorsSkipOrFail")
	}
	Authors(t)
}

// TestAuthorsSkipOrFail: unset skips with a message naming Env; set to a
// missing directory fails the test; set to a bundle tree passes.
func TestAuthorsSkipOrFail(t *testing.T) {
	good := t.TempDir()
	os.MkdirAll(filepath.Join(good, "v0.1", "b"), 0o755)
	for _, c := range []struct {
		name, value string
		set, fail   bool
		out         string
	}{
		{"unset", "", false, false, "SKIP"},
		{"missing", filepath.Join(t.TempDir(), "missing"), true, true, "FAIL"},
		{"bundle tree", good, true, false, "PASS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestAuthorsChild$", "-test.v", "-test.count=1")
			env := []string{"OKFTEST_CHILD=1"}
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, Env+"=") {
					env = append(env, kv)
				}
			}
			if c.set {
				env = append(env, Env+"="+c.value)
			}
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			mentioned := c.name == "bundle tree" || strings.Contains(string(out), Env)
			if (err != nil) != c.fail || !strings.Contains(string(out), c.out) || !mentioned {
				t.Fatalf("err=%v, want failure=%v; output:\n%s", err, c.fail, out)
			}
		})
	}
}
