package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestReviewJournalCannotTargetHiddenPaths: a .okf/journal shipped inside
// a bundle is bundle-controlled data. Recovery must not publish a staged
// payload to a hidden path such as .git/hooks/pre-commit (outside the
// visible bundle, never a commit target).
func TestReviewJournalCannotTargetHiddenPaths(t *testing.T) {
	dir := demoBundle(t)
	if err := os.MkdirAll(filepath.Join(dir, ".git/hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	payload := []byte("#!/bin/sh\necho pwned\n")
	txid := strings.Repeat("ab", 12)
	stage := filepath.Join(dir, stageDir, txid)
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "0"), payload, 0o755); err != nil {
		t.Fatal(err)
	}
	j := journal{Format: 1, TxID: txid, Receipt: Receipt{Format: 1, Kind: "test", Key: strings.Repeat("cd", 32), ChangeID: "x"},
		Files: []journalEntry{{Path: ".git/hooks/pre-commit", ResultSHA: SHA256Hex(payload), Stage: stageDir + "/" + txid + "/0"}}}
	raw, _ := json.Marshal(j)
	if err := os.WriteFile(filepath.Join(dir, journalPath), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	root := openRoot(t, dir)
	err := New(root, Options{}).Recover(context.Background())
	if _, serr := os.Stat(filepath.Join(dir, ".git/hooks/pre-commit")); serr == nil {
		t.Fatal("recovery published a bundle-supplied payload to .git/hooks/pre-commit")
	}
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.BundleCorrupt {
		t.Fatalf("recover = %v, want BUNDLE_CORRUPT", err)
	}
}

// TestReviewStaleReceiptIsNotSuccess: when a key already has a receipt
// that the caller declined to replay (write_concept A -> B -> A), a new
// commit that fails after its point of no return must not be reported as
// success on the strength of the old receipt.
func TestReviewStaleReceiptIsNotSuccess(t *testing.T) {
	dir := demoBundle(t)
	root := openRoot(t, dir)
	key := strings.Repeat("12", 32)
	a := Request{Kind: "test", Key: key, ChangeID: "a", Actor: "okf-mcp",
		Files: []FileChange{{Path: "tables/orders.md", Content: []byte("A\n")}}}
	if _, err := New(root, Options{}).Commit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	b := Request{Kind: "test", Key: strings.Repeat("34", 32), ChangeID: "b", Actor: "okf-mcp",
		Files: []FileChange{{Path: "tables/orders.md", Content: []byte("B\n")}}}
	if _, err := New(root, Options{}).Commit(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	again := a
	again.Replayable = func(Receipt) (bool, error) { return false, nil }
	failing := New(root, Options{Hook: failAt(StepApplied, errors.New("disk on fire"))})
	out, err := failing.Commit(context.Background(), again)
	if err == nil {
		t.Fatalf("a commit without its own durable receipt was reported as success: %+v", out)
	}
	if de, ok := domainerr.As(err); !ok || de.Code != domainerr.WriteOutcomeUnknown {
		t.Fatalf("got %v, want WRITE_OUTCOME_UNKNOWN", err)
	}
}

// TestReviewCompletedJournalDoesNotWedge: a crash after the receipt is
// durable but before the journal is removed leaves a completed journal.
// Editing a bundle file afterwards is an ordinary change, not corruption:
// the next commit must go ahead.
func TestReviewCompletedJournalDoesNotWedge(t *testing.T) {
	dir := demoBundle(t)
	root := openRoot(t, dir)
	crashy := New(root, Options{Hook: failAt(StepReceipted, errors.New("killed"))})
	if _, err := crashy.Commit(context.Background(), demoRequest()); err != nil {
		t.Fatalf("a failure after the receipt is success: %v", err)
	}
	if pending, _ := JournalPending(root); !pending {
		t.Skip("journal already removed")
	}
	if err := os.WriteFile(filepath.Join(dir, "tables/orders.md"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := Request{Kind: "test", Key: strings.Repeat("56", 32), ChangeID: "n", Actor: "okf-mcp",
		Files: []FileChange{{Path: "metrics/cost.md", Content: []byte("---\ntype: Metric\n---\n")}}}
	if _, err := New(root, Options{}).Commit(context.Background(), next); err != nil {
		t.Fatalf("a completed journal wedged the store: %v", err)
	}
	if pending, _ := JournalPending(root); pending {
		t.Fatal("completed journal left behind")
	}
	if got := tree(t, dir)["tables/orders.md"]; got != "edited by hand\n" {
		t.Fatalf("the hand edit was overwritten: %q", got)
	}
}
