package okfops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func patchArgs(dir string, ops ...map[string]any) map[string]any {
	list := make([]any, len(ops))
	for i, o := range ops {
		list[i] = o
	}
	return map[string]any{"bundle_path": dir, "operations": list}
}

func applyArgs(prev map[string]any, args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	out["expected_revision"] = prev["base_revision"]
	out["expected_plan_digest"] = prev["plan_digest"]
	return out
}

var tenOps = []map[string]any{
	{"op": "set_generated", "concept_id": "metrics/bookings", "by": "reference_agent/gemini-2.5-pro", "at": "2026-08-01T10:00:00Z"},
	{"op": "ensure_verification", "concept_id": "metrics/bookings", "by": "process:finance-nightly", "at": "2026-08-02T02:00:00Z"},
	{"op": "remove_verification", "concept_id": "metrics/utilisation", "by": "human:nobody"},
	{"op": "put_source", "concept_id": "metrics/bookings", "source": map[string]any{"id": "fx", "resource": "https://example.com/fx", "title": "FX, daily", "usage_count": 12}},
	{"op": "remove_source", "concept_id": "metrics/bookings", "id": "does-not-exist"},
	{"op": "set_usage_window", "concept_id": "metrics/bookings", "from": "2026-06-01T00:00:00Z", "to": "2026-06-30T00:00:00Z"},
	{"op": "set_lifecycle", "concept_id": "metrics/utilisation-legacy", "status": "deprecated", "stale_after": "2026-09-30T00:00:00Z"},
	{"op": "put_attested_computation", "concept_id": "computations/bookings-quarter", "runtime": "postgres", "attester": map[string]any{"resource": "attesters/sql_check.py"}},
	{"op": "set_lifecycle", "concept_id": "metrics/bookings", "status": "stable"},
	{"op": "set_bundle_version", "version": "0.2"},
}

func TestConceptPatchPreviewApply(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, instantBundle)
	before := snapshotTree(t, dir)
	args := patchArgs(dir, tenOps...)
	prev := h.mustCall(t, "preview_concept_patch", args)
	if prev["status"] != "applicable" {
		t.Fatalf("preview: %v", prev)
	}
	after := snapshotTree(t, dir)
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("preview wrote %s", k)
		}
	}
	paths := prev["affected_paths"].([]any)
	if paths[len(paths)-1] != "index.md" {
		t.Fatalf("root index.md not last: %v", paths)
	}
	orig, _ := os.ReadFile(filepath.Join(dir, "metrics/bookings.md"))
	res := h.mustCall(t, "apply_concept_patch", applyArgs(prev, args))
	if res["status"] != "applied" || res["result_revision"] != prev["result_revision"] {
		t.Fatalf("apply: %v", res)
	}
	now, _ := os.ReadFile(filepath.Join(dir, "metrics/bookings.md"))
	// Untouched lines survive byte for byte: the body and every key the
	// patch did not name.
	origBody := string(orig[strings.Index(string(orig), "\n---\n"):])
	if !strings.HasSuffix(string(now), origBody) {
		t.Fatal("the body changed")
	}
	for _, line := range strings.Split(string(orig), "\n") {
		if strings.HasPrefix(line, "title:") || strings.HasPrefix(line, "tags:") || strings.HasPrefix(line, "  - { by: human:") {
			if !strings.Contains(string(now), line+"\n") {
				t.Fatalf("untouched line lost: %q", line)
			}
		}
	}
	read := h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings"})
	pr := read["projection"].(map[string]any)
	if pr["generated"].(map[string]any)["at"] != "2026-08-01T10:00:00Z" || len(pr["verified"].([]any)) < 2 {
		t.Fatalf("projection after patch: %v", pr)
	}
	if idx, _ := os.ReadFile(filepath.Join(dir, "index.md")); !strings.HasPrefix(string(idx), "---\nokf_version: \"0.2\"\n---\n") {
		t.Fatalf("index.md: %q", idx)
	}
	again := h.mustCall(t, "apply_concept_patch", applyArgs(prev, args))
	if again["status"] != "replayed" || again["change_id"] != res["change_id"] {
		t.Fatalf("replay: %v", again)
	}
	noop := h.mustCall(t, "preview_concept_patch", args)
	if noop["status"] != "noop" || noop["plan_digest"] != nil {
		t.Fatalf("second preview: %v", noop)
	}
}
