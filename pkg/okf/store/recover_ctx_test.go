package store

import (
	"context"
	"errors"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestRecoverHonoursContext: Recover stops when its caller's context ends,
// before it touches anything when already cancelled and between journal
// files when cancelled midway, with CANCELLED and the durable journal left
// in place; the root index.md (last in the journal) is still at base. A
// later recovery completes the commit and the identical retry replays.
func TestRecoverHonoursContext(t *testing.T) {
	dir := demoBundle(t)
	base := tree(t, dir)
	result := expectedResult(base)
	root := openRoot(t, dir)

	// A commit that fails after its point of no return leaves a journal
	// with the first file published.
	failing := New(root, Options{Hook: failAt("apply:1", errors.New("disk on fire"))})
	if _, err := failing.Commit(context.Background(), demoRequest()); err == nil {
		t.Fatal("the injected failure did not fail the commit")
	}
	if pending, _ := JournalPending(root); !pending {
		t.Fatal("no journal to recover")
	}
	wantCancelled := func(err error) {
		t.Helper()
		de, ok := domainerr.As(err)
		if !ok || de.Code != domainerr.Cancelled || !de.Retryable {
			t.Fatalf("recover = %v, want retryable CANCELLED", err)
		}
		if pending, _ := JournalPending(root); !pending {
			t.Fatal("a cancelled recovery dropped the journal")
		}
		if got := tree(t, dir); got["index.md"] != base["index.md"] {
			t.Fatal("a cancelled recovery published the root index.md")
		}
	}

	mid := tree(t, dir)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	wantCancelled(New(root, Options{}).Recover(done))
	if !sameTree(mid, tree(t, dir)) {
		t.Fatal("a recovery cancelled before it began changed the bundle")
	}

	// Cancelled while publishing the third file: the fourth is not started.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var steps []string
	st := New(root, Options{Hook: func(step string) error {
		steps = append(steps, step)
		if step == "apply:2" {
			cancel()
		}
		return nil
	}})
	wantCancelled(st.Recover(ctx))
	if len(steps) != 3 || steps[2] != "apply:2" {
		t.Fatalf("recovery ran steps %v after its context ended", steps)
	}

	if err := New(root, Options{}).Recover(context.Background()); err != nil {
		t.Fatalf("recover: %v", err)
	}
	if !sameTree(result, tree(t, dir)) {
		t.Fatal("the completed recovery did not reach the result")
	}
	if pending, _ := JournalPending(root); pending {
		t.Fatal("journal left behind")
	}
	retry, err := New(root, Options{}).Commit(context.Background(), demoRequest())
	if err != nil || !retry.Replayed {
		t.Fatalf("retry = %+v, %v; want a replay", retry, err)
	}
}

// TestCommitRecoveryHonoursContext: a commit that finds an interrupted
// journal recovers it under the caller's context; cancelled, it is
// CANCELLED and writes nothing of its own request.
func TestCommitRecoveryHonoursContext(t *testing.T) {
	dir := demoBundle(t)
	root := openRoot(t, dir)
	failing := New(root, Options{Hook: failAt("apply:0", errors.New("disk on fire"))})
	if _, err := failing.Commit(context.Background(), demoRequest()); err == nil {
		t.Fatal("the injected failure did not fail the commit")
	}
	before := tree(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	st := New(root, Options{Hook: func(step string) error {
		if step == "apply:0" {
			cancel()
		}
		return nil
	}})
	other := demoRequest()
	other.Key, other.ChangeID = "cd"+other.Key[2:], "sha256:other"
	_, err := st.Commit(ctx, other)
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.Cancelled {
		t.Fatalf("commit = %v, want CANCELLED", err)
	}
	if pending, _ := JournalPending(root); !pending {
		t.Fatal("the interrupted journal was dropped")
	}
	if got, ok, _ := st.LookupReceipt(other.Key); ok {
		t.Fatalf("the cancelled commit made a receipt: %+v", got)
	}
	if after := tree(t, dir); after["index.md"] != before["index.md"] {
		t.Fatal("the cancelled commit's recovery published the root index.md")
	}
}
