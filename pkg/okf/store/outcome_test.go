package store

import (
	"context"
	"errors"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestOutcomeAroundThePointOfNoReturn: a failure before the journal is
// durable writes nothing; one after it is WRITE_OUTCOME_UNKNOWN, the next
// commit's recovery completes it, and the identical retry replays the
// receipt. A failure after the receipt is written is success.
func TestOutcomeAroundThePointOfNoReturn(t *testing.T) {
	boom := errors.New("disk on fire")
	cases := []struct {
		step     string
		wantCode domainerr.Code // "" = success
		atResult bool           // bundle at result right after the failed call
	}{
		{StepStaged, "", false},
		{"apply:1", domainerr.WriteOutcomeUnknown, false},
		{StepVerified, domainerr.WriteOutcomeUnknown, true},
		{StepReceipted, "success", true},
	}
	for _, c := range cases {
		t.Run(c.step, func(t *testing.T) {
			dir := demoBundle(t)
			base := tree(t, dir)
			result := expectedResult(base)
			root := openRoot(t, dir)
			failing := New(root, Options{Hook: failAt(c.step, boom)})
			_, err := failing.Commit(context.Background(), demoRequest())
			switch c.wantCode {
			case "success":
				if err != nil {
					t.Fatalf("a failure after the receipt must be success, got %v", err)
				}
			case "":
				if err == nil || !errors.Is(err, boom) {
					t.Fatalf("got %v, want the injected failure", err)
				}
				if !sameTree(tree(t, dir), base) {
					t.Fatal("a failure before the point of no return changed the bundle")
				}
			default:
				de, ok := domainerr.As(err)
				if !ok || de.Code != c.wantCode || de.Retryable {
					t.Fatalf("got %v, want non-retryable %s (inspect, then retry the identical request)", err, c.wantCode)
				}
				if got := tree(t, dir); c.atResult != sameTree(got, result) {
					t.Fatalf("bundle at result = %v, want %v", sameTree(got, result), c.atResult)
				}
			}
			retry, err := New(root, Options{}).Commit(context.Background(), demoRequest())
			if err != nil {
				t.Fatal(err)
			}
			wantReplay := c.wantCode != ""
			if retry.Replayed != wantReplay {
				t.Fatalf("retry replayed = %v, want %v", retry.Replayed, wantReplay)
			}
			if !sameTree(tree(t, dir), result) {
				t.Fatal("bundle not at result after the retry")
			}
		})
	}
}

// TestCASAndNoop: a stale expected revision is a retryable conflict that
// writes nothing; a request whose content is already there is a noop that
// writes nothing, not even .okf/receipts.
func TestCASAndNoop(t *testing.T) {
	dir := demoBundle(t)
	root := openRoot(t, dir)
	st := New(root, Options{})
	req := demoRequest()
	req.ExpectedRevision = "sha256:" + "00"
	_, err := st.Commit(context.Background(), req)
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.RevisionConflict || !de.Retryable {
		t.Fatalf("stale CAS: %v", err)
	}
	same := Request{Kind: "test", Key: "ee" + demoRequest().Key[2:], ChangeID: "noop", Actor: "okf-mcp",
		Files: []FileChange{{Path: "tables/orders.md", Content: []byte(tree(t, dir)["tables/orders.md"])}}}
	out, err := st.Commit(context.Background(), same)
	if err != nil || !out.Noop {
		t.Fatalf("noop: %+v %v", out, err)
	}
	if _, ok, _ := st.LookupReceipt(same.Key); ok {
		t.Fatal("a noop stored a receipt")
	}
	exp := demoRequest()
	exp.Key = "ff" + exp.Key[2:]
	exp.Files = []FileChange{{Path: "tables/orders.md", Content: []byte("x"), ExpectSHA: "deadbeef", ExpectSet: true}}
	_, err = st.Commit(context.Background(), exp)
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.RevisionConflict {
		t.Fatalf("per-file expectation: %v", err)
	}
}
