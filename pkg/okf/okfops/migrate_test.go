package okfops

import (
	"encoding/json"
	"strings"
	"testing"
)

func migrateArgs(dir string, mappings []any) map[string]any {
	if mappings == nil {
		mappings = []any{}
	}
	return map[string]any{"bundle_path": dir, "generated_by": "process:okf-migration", "legacy_timestamp": "remove", "citation_mappings": mappings}
}

func migrateApply(prev, args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	out["expected_source"] = prev["expected_source"]
	if prev["proof"] != nil {
		out["proof"] = prev["proof"]
		out["expected_plan_digest"] = prev["plan_digest"]
	}
	return out
}

// migrateFully previews, supplies a mapping for every citation the preview
// asks about (taken from its own text, the way a reviewer would), and
// returns the applicable preview and its arguments.
func migrateFully(t testing.TB, h *harness, dir string) (map[string]any, map[string]any) {
	t.Helper()
	args := migrateArgs(dir, nil)
	prev := h.mustCall(t, "preview_v02_migration", args)
	if prev["status"] == "blocked" {
		var mappings []any
		for i, n := range prev["needs_mapping"].([]any) {
			m := n.(map[string]any)
			mappings = append(mappings, map[string]any{"concept_id": m["concept_id"], "item": m["item"],
				"id": "ref-" + string(rune('a'+i%26)), "resource": "scope: " + strings.TrimSpace(m["text"].(string))[:min(40, len(m["text"].(string)))]})
		}
		args = migrateArgs(dir, mappings)
		prev = h.mustCall(t, "preview_v02_migration", args)
	}
	if prev["status"] != "applicable" {
		raw, _ := json.MarshalIndent(prev["diagnostics"], "", " ")
		t.Fatalf("migration not applicable: %s\n%s", prev["status"], raw)
	}
	return prev, args
}

// TestMigrateV01Fixtures migrates every own v0.1 bundle end to end.
func TestMigrateV01Fixtures(t *testing.T) { checkMigrateV01(t, ownSource()) }

// TestConformanceMigrateV01 migrates every v0.1 bundle of the spec authors.
func TestConformanceMigrateV01(t *testing.T) { checkMigrateV01(t, authorsSource(t)) }

func checkMigrateV01(t *testing.T, src fixtureSource) {
	h := newHarness(t, Config{})
	for _, name := range src.profile(t, "v0.1") {
		t.Run(name, func(t *testing.T) {
			dir := src.copy(t, name)
			before := snapshotTree(t, dir)
			prev, args := migrateFully(t, h, dir)
			if after := snapshotTree(t, dir); len(after) != len(before) {
				t.Fatal("preview wrote something")
			}
			if src := prev["expected_source"].(map[string]any); src["okf_version"] != "0.1" || src["legacy_concepts"].(float64) == 0 {
				t.Fatalf("expected_source: %v", src)
			}
			paths := prev["affected_paths"].([]any)
			if paths[len(paths)-1] != "index.md" {
				t.Fatal("root index.md not last")
			}
			res := h.mustCall(t, "apply_v02_migration", migrateApply(prev, args))
			if res["status"] != "applied" {
				t.Fatalf("apply: %v", res)
			}
			rep := h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
			b := rep["bundle"].(map[string]any)
			if rep["conformant"] != true || b["okf_version"] != "0.2" || b["declared"] != true {
				t.Fatalf("after migration: %v", rep)
			}
			for _, p := range rep["problems"].([]any) {
				if c := p.(map[string]any)["code"]; c == "legacy_timestamp" || c == "legacy_citations" {
					t.Fatalf("legacy left behind: %v", p)
				}
			}
			list := h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 1000})
			for _, c := range list["concepts"].([]any) {
				row := c.(map[string]any)
				if row["generated_at"] == nil {
					continue
				}
			}
			again := h.mustCall(t, "apply_v02_migration", migrateApply(prev, args))
			if again["status"] != "replayed" {
				t.Fatalf("replay: %v", again)
			}
			// The bundle is now 0.2: a fresh preview is a target-noop, and
			// the noop apply takes expected_source only and writes nothing.
			noop := h.mustCall(t, "preview_v02_migration", args)
			if noop["status"] != "noop" || noop["proof"] != nil || noop["plan_digest"] != nil {
				t.Fatalf("target preview: %v", noop)
			}
			snap := snapshotTree(t, dir)
			tn := h.mustCall(t, "apply_v02_migration", migrateApply(noop, args))
			if tn["status"] != "noop" || tn["target_conformant"] != true {
				t.Fatalf("target-noop apply: %v", tn)
			}
			if after := snapshotTree(t, dir); len(after) != len(snap) {
				t.Fatal("target-noop wrote something")
			}
		})
	}
}
