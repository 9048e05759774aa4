package okfops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

// TestPatchNoopApply: the apply of a matching no-op (the preview's revision,
// no digest since a noop preview carries none) returns noop and writes
// nothing, not even .okf/. A made-up digest, a moved revision, or a plan
// that is no longer a no-op are refused, also without writing.
func TestPatchNoopApply(t *testing.T) {
	h := newHarness(t, Config{})
	concept := "---\ntype: Metric\nstatus: stable\nverified:\n  - { by: process:nightly, at: 2026-07-01T09:00:00Z }\n---\n\nBody.\n"
	dir := okftest.Write(t, map[string]string{
		"index.md":        "---\nokf_version: \"0.2\"\n---\n# Index\n",
		"metrics/rate.md": concept,
	})
	args := patchArgs(dir,
		map[string]any{"op": "set_lifecycle", "concept_id": "metrics/rate", "status": "stable"},
		map[string]any{"op": "ensure_verification", "concept_id": "metrics/rate", "by": "process:nightly", "at": "2026-07-01T09:00:00Z"},
		map[string]any{"op": "remove_source", "concept_id": "metrics/rate", "id": "absent"},
	)
	prev := h.mustCall(t, "preview_concept_patch", args)
	if prev["status"] != "noop" || prev["plan_digest"] != nil {
		t.Fatalf("preview: %v", prev)
	}
	apply := func(revision any, digest string) map[string]any {
		a := applyArgs(prev, args)
		a["expected_revision"], a["expected_plan_digest"] = revision, digest
		return a
	}
	snap := snapshotTree(t, dir)
	unchanged := func(what string) {
		t.Helper()
		if !sameSnapshot(snap, snapshotTree(t, dir)) || okfExists(dir) {
			t.Fatalf("%s wrote something", what)
		}
	}

	res := h.mustCall(t, "apply_concept_patch", apply(prev["base_revision"], ""))
	if res["status"] != "noop" || res["base_revision"] != prev["base_revision"] || res["result_revision"] != prev["base_revision"] ||
		res["actor"] != Actor || len(res["affected_paths"].([]any)) != 0 || res["committed_at"] != nil || res["idempotency_key"] != nil {
		t.Fatalf("noop apply: %v", res)
	}
	unchanged("the noop apply")

	_, derr := h.call(t, "apply_concept_patch", apply(prev["base_revision"], "sha256:"+strings.Repeat("0", 64)))
	wantRetryable(t, derr, domainerr.PlanMismatch, false)
	unchanged("an apply with a made-up digest")

	// The bundle moves on: the preview's revision no longer holds.
	if err := os.WriteFile(filepath.Join(dir, "metrics/rate.md"), []byte(strings.Replace(concept, "status: stable", "status: draft", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	snap = snapshotTree(t, dir)
	_, derr = h.call(t, "apply_concept_patch", apply(prev["base_revision"], ""))
	wantRetryable(t, derr, domainerr.RevisionConflict, true)
	unchanged("a noop apply against a moved revision")

	// At the new revision the same operations change something: without
	// a reviewed digest that is a mismatch, never a silent write.
	now := h.mustCall(t, "preview_concept_patch", args)
	if now["status"] != "applicable" {
		t.Fatalf("preview after the change: %v", now)
	}
	_, derr = h.call(t, "apply_concept_patch", apply(now["base_revision"], ""))
	wantRetryable(t, derr, domainerr.PlanMismatch, false)
	unchanged("an apply without a digest of a plan that writes")
}
