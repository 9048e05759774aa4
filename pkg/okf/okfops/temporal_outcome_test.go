package okfops

import (
	"context"
	"errors"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/store"
	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

// temporalOutcomeBundle is a small date-profile bundle with dates in every
// profile field family, in three files (root index.md published last).
func temporalOutcomeBundle(t *testing.T) string {
	return okftest.Write(t, map[string]string{
		"index.md":     "---\nokf_version: \"0.2\"\n---\n# Index\n",
		"metrics/a.md": "---\ntype: Metric\nstale_after: 2026-12-31\nusage_window:\n  from: 2026-01-01\n  to: 2026-06-30\n---\n\nA.\n",
		"tables/b.md":  "---\ntype: Table\nsources:\n  - { id: s, resource: https://example.com/s, last_modified: 2026-05-01 }\n---\n\nB.\n",
		"notes/c.md":   "---\ntype: Note\nstale_after: 2027-01-31\n---\n\nC.\n",
	})
}

// TestTemporalApplyCancellationAndUncertainOutcome drives the outcomes of
// apply_temporal_upgrade around the store's point of no return, as
// TestApplyOutcomes does for the patch and the migration: a cancellation
// before it writes nothing (CANCELLED, then the apply succeeds); a
// cancellation after it still commits, and the confirmed receipt is
// success; a failure after it without a receipt is WRITE_OUTCOME_UNKNOWN
// (not retryable: inspect first) and the identical retry replays; a failure
// after the receipt is success.
func TestTemporalApplyCancellationAndUncertainOutcome(t *testing.T) {
	hook := &faultHook{}
	h := newHarness(t, Config{StoreHook: hook.hook})
	fresh := func(t *testing.T) (string, map[string]any, map[string]any) {
		t.Cleanup(func() { hook.arm("", nil) })
		dir := temporalOutcomeBundle(t)
		args := upgradableArgs(t, h, dir)
		prev := h.mustCall(t, "preview_temporal_upgrade", args)
		if prev["status"] != "applicable" {
			t.Fatalf("preview: %v", prev)
		}
		return dir, prev, temporalApplyArgs(prev, args)
	}
	refDir, refPrev, refArgs := fresh(t)
	base := visibleTree(t, refDir)
	if ref := h.mustCall(t, "apply_temporal_upgrade", refArgs); ref["status"] != "applied" || ref["result_revision"] != refPrev["result_revision"] {
		t.Fatalf("reference apply: %v", ref)
	}
	result := visibleTree(t, refDir)
	if treeDiff(base, result) == "" {
		t.Fatal("the upgrade changed nothing")
	}
	at := func(t *testing.T, want map[string]string, dir, when string) {
		t.Helper()
		if p := treeDiff(want, visibleTree(t, dir)); p != "" {
			t.Fatalf("%s: %s is not where expected", when, p)
		}
	}

	t.Run("cancelled before the point of no return", func(t *testing.T) {
		dir, _, args := fresh(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		hook.arm(store.StepStaged, func() error { cancel(); return nil })
		_, derr := h.callCtx(t, ctx, "apply_temporal_upgrade", args)
		wantRetryable(t, derr, domainerr.Cancelled, true)
		at(t, base, dir, "after the cancellation")
		if hasJournal(dir) {
			t.Fatal("a cancelled apply left a journal")
		}
		if res := h.mustCall(t, "apply_temporal_upgrade", args); res["status"] != "applied" {
			t.Fatalf("the apply after a cancellation: %v", res)
		}
		at(t, result, dir, "after the apply")
	})

	t.Run("cancelled after the point of no return", func(t *testing.T) {
		dir, prev, args := fresh(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		hook.arm(store.StepJournaled, func() error { cancel(); return nil })
		res, derr := h.callCtx(t, ctx, "apply_temporal_upgrade", args)
		if derr != nil || res["status"] != "applied" || res["change_id"] != prev["plan_digest"] {
			t.Fatalf("a committed receipt after cancellation must be success: %v %v", res, derr)
		}
		at(t, result, dir, "after the cancelled but committed apply")
		if again := h.mustCall(t, "apply_temporal_upgrade", args); again["status"] != "replayed" || again["committed_at"] != res["committed_at"] {
			t.Fatalf("retry: %v", again)
		}
	})

	boom := errors.New("disk on fire")
	for _, c := range []struct {
		step     string
		atResult bool
	}{{"apply:0", false}, {store.StepVerified, true}} {
		t.Run("failure after the point of no return at "+c.step, func(t *testing.T) {
			dir, prev, args := fresh(t)
			hook.arm(c.step, func() error { return boom })
			_, derr := h.call(t, "apply_temporal_upgrade", args)
			wantRetryable(t, derr, domainerr.WriteOutcomeUnknown, false)
			if derr.Details["idempotency_key"] == nil {
				t.Fatalf("no idempotency key to inspect: %v", derr.Details)
			}
			want := base
			if c.atResult {
				want = result
			}
			at(t, want, dir, "right after the failure")
			if !hasJournal(dir) {
				t.Fatal("no journal to recover from")
			}
			res := h.mustCall(t, "apply_temporal_upgrade", args)
			if res["status"] != "replayed" || res["change_id"] != prev["plan_digest"] || res["idempotency_key"] != derr.Details["idempotency_key"] {
				t.Fatalf("the identical retry: %v", res)
			}
			at(t, result, dir, "after the retry")
			if hasJournal(dir) {
				t.Fatal("the journal was left behind")
			}
		})
	}

	t.Run("failure after the receipt", func(t *testing.T) {
		dir, _, args := fresh(t)
		hook.arm(store.StepReceipted, func() error { return boom })
		res := h.mustCall(t, "apply_temporal_upgrade", args)
		if res["status"] != "applied" {
			t.Fatalf("a failure after the durable receipt must be success: %v", res)
		}
		at(t, result, dir, "after the apply")
		if again := h.mustCall(t, "apply_temporal_upgrade", args); again["status"] != "replayed" || again["committed_at"] != res["committed_at"] {
			t.Fatalf("retry: %v", again)
		}
	})
}
