package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

// The child process modes, selected by NB_STORE_CHILD.
const (
	childCrash  = "crash"  // commit demoRequest, SIGKILL itself at NB_CRASH_STEP
	childCommit = "commit" // print "ready", wait for stdin to close, commit the request in NB_REQUEST, print the outcome
	childHold   = "hold"   // commit demoRequest, printing "holding" at "staged" and waiting there until stdin closes
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("NB_STORE_CHILD"); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

func runChild(mode string) int {
	root, err := safefs.Open(os.Getenv("NB_BUNDLE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	opt := Options{}
	req := demoRequest()
	switch mode {
	case childCrash:
		step := os.Getenv("NB_CRASH_STEP")
		opt.Hook = func(s string) error {
			if s == step {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				time.Sleep(time.Hour)
			}
			return nil
		}
	case childHold:
		opt.Hook = func(s string) error {
			if s == StepStaged {
				fmt.Println("holding")
				io.Copy(io.Discard, os.Stdin)
			}
			return nil
		}
	case childCommit:
		if err := json.Unmarshal([]byte(os.Getenv("NB_REQUEST")), &req); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
	}
	out, err := New(root, opt).Commit(context.Background(), req)
	if err != nil {
		if de, ok := domainerr.As(err); ok {
			fmt.Println("ERR", de.Code)
			return 0
		}
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	fmt.Println("OK", out.Receipt.ResultRevision)
	return 0
}

// demoBundle writes a small bundle and returns its directory.
func demoBundle(t testing.TB) string {
	return okftest.Write(t, map[string]string{
		"index.md":            "# Subdirectories\n\n* [tables](tables/index.md) - Tables.\n",
		"tables/index.md":     "# Tables\n\n* [orders](orders.md) - Orders.\n",
		"tables/orders.md":    "---\ntype: BigQuery Table\ntitle: Orders\n---\n\n# Schema\n",
		"tables/customers.md": "---\ntype: BigQuery Table\ntitle: Customers\n---\n",
		"attesters/check.py":  "print('inert')\n",
	})
}

// openRoot opens dir as a bundle root that closes when the test ends.
func openRoot(t testing.TB, dir string) *safefs.Root {
	t.Helper()
	root, err := safefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// failAt is a store hook that fails the step named with err and lets every
// other step pass.
func failAt(step string, err error) func(string) error {
	return func(s string) error {
		if s == step {
			return err
		}
		return nil
	}
}

// demoRequest changes a concept, creates one in a new directory, deletes
// one, and rewrites the root index.md (which must be published last).
func demoRequest() Request {
	return Request{
		Kind: "test", Key: strings.Repeat("ab", 32), ChangeID: "sha256:test", Actor: "okf-mcp", RequestDigest: "sha256:req",
		Files: []FileChange{
			{Path: "index.md", Content: []byte("---\nokf_version: \"0.2\"\n---\n# Subdirectories\n")},
			{Path: "tables/orders.md", Content: []byte("---\ntype: BigQuery Table\ntitle: Orders v2\n---\n")},
			{Path: "metrics/revenue.md", Content: []byte("---\ntype: Metric\n---\n")},
			{Path: "tables/customers.md"},
		},
	}
}

// tree reads every visible file of dir (skipping .okf) into a map.
func tree(t testing.TB, dir string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == Dir {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func expectedResult(base map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for _, f := range demoRequest().Files {
		if f.Content == nil {
			delete(out, f.Path)
		} else {
			out[f.Path] = string(f.Content)
		}
	}
	return out
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func child(t *testing.T, mode, bundle string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"NB_STORE_CHILD=" + mode, "NB_BUNDLE=" + bundle}, env...)...)
	return cmd
}

// TestCrashMatrix kills a child process at every commit step and checks
// that recovery leaves the bundle byte-exactly at base (before the journal
// is durable) or at result (after), and that a retry then replays the
// receipt or commits cleanly.
func TestCrashMatrix(t *testing.T) {
	steps := []string{StepLocked, StepStaged, StepJournaled, "apply:0", "apply:1", "apply:2", "apply:3", StepApplied, StepVerified, StepReceipted}
	for i, step := range steps {
		t.Run(step, func(t *testing.T) {
			dir := demoBundle(t)
			base := tree(t, dir)
			result := expectedResult(base)
			out, err := child(t, childCrash, dir, "NB_CRASH_STEP="+step).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed at %s: %v\n%s", step, err, out)
			}
			durable := i >= 2
			mid := tree(t, dir)
			if !sameTree(mid, base) && !sameTree(mid, result) && !durable {
				t.Fatalf("before the point of no return the bundle changed")
			}
			if step == "apply:3" {
				// Three files are published; the root index.md, published
				// last, must still be at base.
				if mid["index.md"] != base["index.md"] || mid["tables/orders.md"] != result["tables/orders.md"] {
					t.Fatal("the root index.md was not published last")
				}
			}

			root := openRoot(t, dir)
			st := New(root, Options{})
			if err := st.Recover(context.Background()); err != nil {
				t.Fatalf("recover: %v", err)
			}
			after := tree(t, dir)
			want := base
			if durable {
				want = result
			}
			if !sameTree(after, want) {
				t.Fatalf("after recovery the bundle is neither exactly base nor result as expected (durable=%v):\n%v", durable, after)
			}
			if pending, _ := JournalPending(root); pending {
				t.Fatal("journal left behind after recovery")
			}
			assertNoStage(t, dir)

			retry, err := st.Commit(context.Background(), demoRequest())
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if retry.Replayed != durable {
				t.Fatalf("retry replayed=%v, want %v", retry.Replayed, durable)
			}
			if !sameTree(tree(t, dir), result) {
				t.Fatal("after the retry the bundle is not at result")
			}
			final, err := Snapshot(root, DefaultLimits, false)
			if err != nil {
				t.Fatal(err)
			}
			if final.Revision != retry.Receipt.ResultRevision {
				t.Fatalf("revision %s does not match the receipt's %s", final.Revision, retry.Receipt.ResultRevision)
			}
		})
	}
}

func assertNoStage(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(dir, stageDir))
	if len(entries) != 0 {
		t.Fatalf("stage not cleaned: %d entries", len(entries))
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", d.Name())
		}
		return nil
	})
}

// TestRecoveryFailsClosed: a journal whose file was changed to a third
// state after the crash is corruption, and recovery touches nothing.
func TestRecoveryFailsClosed(t *testing.T) {
	dir := demoBundle(t)
	out, err := child(t, childCrash, dir, "NB_CRASH_STEP=apply:1").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child was not killed: %v\n%s", err, out)
	}
	// apply:0 published nothing yet for index-last ordering; tamper with
	// a journal file that is still at base.
	if err := os.WriteFile(filepath.Join(dir, "tables/orders.md"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	root := openRoot(t, dir)
	st := New(root, Options{})
	err = st.Recover(context.Background())
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.BundleCorrupt {
		t.Fatalf("recover = %v, want BUNDLE_CORRUPT", err)
	}
	if _, err := st.Commit(context.Background(), demoRequest()); err == nil {
		t.Fatal("a commit went ahead over a corrupt journal")
	}
	if !sameTree(before, tree(t, dir)) {
		t.Fatal("failed recovery changed the bundle")
	}
	if pending, _ := JournalPending(root); !pending {
		t.Fatal("the journal must stay for inspection")
	}
}

// TestMalformedJournalFailsClosed covers an unreadable journal.
func TestMalformedJournalFailsClosed(t *testing.T) {
	dir := demoBundle(t)
	os.MkdirAll(filepath.Join(dir, Dir), 0o755)
	os.WriteFile(filepath.Join(dir, journalPath), []byte("{not json"), 0o600)
	root := openRoot(t, dir)
	err := New(root, Options{}).Recover(context.Background())
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.BundleCorrupt {
		t.Fatalf("recover = %v, want BUNDLE_CORRUPT", err)
	}
}
