package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// TestTwoProcessesCAS starts two processes that commit different changes
// planned against the same revision, released together once both are
// ready: the lease serializes them and the CAS lets exactly one through.
func TestTwoProcessesCAS(t *testing.T) {
	for round := 0; round < 5; round++ {
		dir := demoBundle(t)
		root, err := safefs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		base, err := Snapshot(root, DefaultLimits, false)
		root.Close()
		if err != nil {
			t.Fatal(err)
		}
		writers := make([]*writer, 2)
		for i := range writers {
			req := Request{
				Kind: "test", Key: strings.Repeat(fmt.Sprintf("%02x", i+1), 32), ChangeID: fmt.Sprintf("c%d", i), Actor: "okf-mcp",
				ExpectedRevision: base.Revision,
				Files:            []FileChange{{Path: "tables/orders.md", Content: []byte(fmt.Sprintf("---\ntype: T\ntitle: writer %d\n---\n", i))}},
			}
			raw, _ := json.Marshal(req)
			writers[i] = startWriter(t, child(t, childCommit, dir, "NB_REQUEST="+string(raw)), "ready")
		}
		for _, w := range writers { // both wait at the barrier; release them together
			w.stdin.Close()
		}
		oks, conflicts := 0, 0
		for i, w := range writers {
			switch out := w.finish(t); {
			case strings.HasPrefix(out, "OK "):
				oks++
			case strings.HasPrefix(out, "ERR REVISION_CONFLICT"):
				conflicts++
			default:
				t.Fatalf("writer %d: unexpected %q", i, out)
			}
		}
		if oks != 1 || conflicts != 1 {
			t.Fatalf("round %d: %d commits and %d conflicts, want 1 and 1", round, oks, conflicts)
		}
	}
}

// writer is a child process that signals on stdout when it reached a
// step, and waits there until its stdin is closed.
type writer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr strings.Builder
}

// startWriter starts cmd and returns once it printed the line signal.
func startWriter(t *testing.T, cmd *exec.Cmd, signal string) *writer {
	t.Helper()
	w := &writer{cmd: cmd}
	cmd.Stderr = &w.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.stdin, w.stdout = stdin, bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.stdin.Close(); cmd.Wait() }) // lets a failed test end
	if line, err := w.stdout.ReadString('\n'); err != nil || line != signal+"\n" {
		t.Fatalf("child did not signal %q: %q %v\n%s", signal, line, err, w.stderr.String())
	}
	return w
}

// finish releases the child, waits for it and returns the rest of its
// stdout.
func (w *writer) finish(t *testing.T) string {
	t.Helper()
	w.stdin.Close()
	rest, _ := io.ReadAll(w.stdout)
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s%s", err, rest, w.stderr.String())
	}
	return string(rest)
}

// TestLeaseExcludesOtherProcess: while a child holds the exclusive lease
// mid-commit (until released), a commit here waits and then gives up with
// BUSY, writing nothing; once released, the child's commit completes.
func TestLeaseExcludesOtherProcess(t *testing.T) {
	dir := demoBundle(t)
	w := startWriter(t, child(t, childHold, dir), "holding")
	root, err := safefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := demoRequest()
	req.Key = strings.Repeat("cd", 32)
	_, err = New(root, Options{}).Commit(ctx, req)
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.Busy || !de.Retryable {
		t.Fatalf("commit under a foreign lease = %v, want retryable BUSY", err)
	}
	// A reader's shared lease waits too.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, err := LockShared(ctx2, root); err == nil {
		t.Fatal("shared lease granted while a writer holds the exclusive one")
	}
	if out := w.finish(t); !strings.HasPrefix(out, "OK ") {
		t.Fatalf("the released child did not commit: %q", out)
	}
}
