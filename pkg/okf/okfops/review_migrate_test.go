package okfops

import (
	"testing"
)

// TestReviewMigrationReplayNeedsTheSameProof: only the exact apply (same
// request, proof and digest) replays a migration receipt; a proof whose
// result_revision differs is not the previewed proof and must not replay.
func TestReviewMigrationReplayNeedsTheSameProof(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, v01Bundle)
	prev, args := migrateFully(t, h, dir)
	full := migrateApply(prev, args)
	if res := h.mustCall(t, "apply_v02_migration", full); res["status"] != "applied" {
		t.Fatalf("genuine apply: %v", res)
	}
	forged := map[string]any{}
	for k, v := range full {
		forged[k] = v
	}
	proof := map[string]any{}
	for k, v := range prev["proof"].(map[string]any) {
		proof[k] = v
	}
	proof["result_revision"] = prev["base_revision"]
	forged["proof"] = proof
	res, derr := h.call(t, "apply_v02_migration", forged)
	if derr == nil {
		t.Fatalf("an apply with a different proof replayed the receipt: %v", res)
	}
	wantCode(t, derr, registryCode("PLAN_MISMATCH"))
	if res := h.mustCall(t, "apply_v02_migration", full); res["status"] != "replayed" {
		t.Fatalf("exact retry: %v", res)
	}
}
