package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// TestTwoProcessesCAS starts two processes that commit different changes
// planned against the same revision at the same moment: the lease
// serializes them and the CAS lets exactly one through.
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
		start := strconv.FormatInt(time.Now().Add(300*time.Millisecond).UnixNano(), 10)
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for i := 0; i < 2; i++ {
			req := Request{
				Kind: "test", Key: strings.Repeat(fmt.Sprintf("%02x", i+1), 32), ChangeID: fmt.Sprintf("c%d", i), Actor: "okf-mcp",
				ExpectedRevision: base.Revision,
				Files:            []FileChange{{Path: "tables/orders.md", Content: []byte(fmt.Sprintf("---\ntype: T\ntitle: writer %d\n---\n", i))}},
			}
			raw, _ := json.Marshal(req)
			cmd := child(t, childCommit, dir, "NB_REQUEST="+string(raw), "NB_START_AT="+start)
			var sb strings.Builder
			cmd.Stdout, cmd.Stderr = &sb, &sb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, &sb)
		}
		oks, conflicts := 0, 0
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("writer %d: %v\n%s", i, err, outs[i])
			}
			switch out := outs[i].String(); {
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

// TestLeaseExcludesOtherProcess: while a child holds the exclusive lease
// mid-commit, a commit here waits and then gives up with BUSY, writing
// nothing.
func TestLeaseExcludesOtherProcess(t *testing.T) {
	dir := demoBundle(t)
	cmd := child(t, childHold, dir, "NB_HOLD=3s")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	buf := make([]byte, 7)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "holding" {
		t.Fatalf("child did not reach the held step: %q %v", buf, err)
	}
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
}
