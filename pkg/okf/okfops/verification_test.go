package okfops

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

const claimedConcept = "---\ntype: Metric\ntitle: Claimed\nverified: { by: human:alice@example.com, at: 2026-07-01T09:00:00Z }\n---\n\nSee [plain](plain.md).\n"

func hasDiagnostic(v any, code string) bool {
	list, _ := v.([]any)
	for _, d := range list {
		if m, _ := d.(map[string]any); m["code"] == code && m["severity"] == "info" {
			return true
		}
	}
	return false
}

// TestNoSelfAwardedReview: a human: verifier reaches a bundle only as a
// caller's (or a file author's) string, so no path reports it as review.
// write_concept flags it like the patch path does, and every read
// projection reports the tier as a claim, never "human-reviewed".
func TestNoSelfAwardedReview(t *testing.T) {
	h := newHarness(t, Config{})
	dir := okftest.Write(t, map[string]string{
		"index.md":           "---\nokf_version: \"0.2\"\n---\n# Index\n",
		"metrics/plain.md":   "---\ntype: Metric\ntitle: Plain\n---\n\nSee [claimed](claimed.md).\n",
		"metrics/process.md": "---\ntype: Metric\nverified: { by: process:nightly, at: 2026-07-01T09:00:00Z }\n---\n\nChecked by a job.\n",
	})

	w := h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/claimed", "content": claimedConcept})
	if !hasDiagnostic(w["diagnostics"], "caller_supplied_human_verifier") {
		t.Errorf("write_concept stored a caller's human: verifier without a flag: %v", w)
	}
	again := h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/claimed", "content": claimedConcept})
	if again["replayed"] != true || !hasDiagnostic(again["diagnostics"], "caller_supplied_human_verifier") {
		t.Errorf("the replay lost the flag: %v", again)
	}
	plainWrite := h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/other", "content": "---\ntype: Metric\n---\n"})
	if hasDiagnostic(plainWrite["diagnostics"], "caller_supplied_human_verifier") {
		t.Errorf("a write without a human: verifier was flagged: %v", plainWrite)
	}

	args := patchArgs(dir, map[string]any{"op": "ensure_verification", "concept_id": "metrics/plain", "by": "human:bob", "at": "2026-07-02T09:00:00Z"})
	prev := h.mustCall(t, "preview_concept_patch", args)
	if !hasDiagnostic(prev["diagnostics"], "caller_supplied_human_verifier") {
		t.Fatalf("the patch path lost its flag: %v", prev)
	}
	h.mustCall(t, "apply_concept_patch", applyArgs(prev, args))

	tiers := map[string]string{"metrics/claimed": doc.TierHumanReviewClaimed, "metrics/plain": doc.TierHumanReviewClaimed,
		"metrics/process": doc.TierMachineConfirmed, "metrics/other": doc.TierUnverified}
	for id, want := range tiers {
		r := h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": id})
		if got := r["projection"].(map[string]any)["trust_tier"]; got != want {
			t.Errorf("read_concept %s: trust_tier %v, want %s", id, got, want)
		}
	}
	list := h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir})
	for _, row := range list["concepts"].([]any) {
		m := row.(map[string]any)
		if want := tiers[m["id"].(string)]; m["trust_tier"] != want {
			t.Errorf("list_concepts %s: trust_tier %v, want %s", m["id"], m["trust_tier"], want)
		}
	}

	// No read projection says the concept was reviewed.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/claimed"}},
		{"list_concepts", map[string]any{"bundle_path": dir}},
		{"search_concepts", map[string]any{"bundle_path": dir, "query": "claimed"}},
		{"get_neighbors", map[string]any{"bundle_path": dir, "concept_id": "metrics/plain"}},
		{"validate_bundle", map[string]any{"bundle_path": dir}},
	} {
		raw, _ := json.Marshal(h.mustCall(t, c.tool, c.args))
		if strings.Contains(string(raw), "human-reviewed") {
			t.Errorf("%s reports review from a verifier string: %s", c.tool, raw)
		}
	}
}
