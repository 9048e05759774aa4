package okfops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
)

const newConcept = "---\ntype: Metric\ntitle: Net revenue # a comment that must survive\ncustom_key: kept\ngenerated: { by: reference_agent/x, at: 2026-07-01T00:00:00Z }\nstale_after: 2027-01-01T00:00:00Z\n---\n\n# Definition\n\nNet of returns.\n"

func TestWriteConcept(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, instantBundle)
	args := map[string]any{"bundle_path": dir, "concept_id": "metrics/net-revenue", "content": newConcept}

	first := h.mustCall(t, "write_concept", args)
	if first["created"] != true || first["changed"] != true || first["replayed"] != false || first["actor"] != "okf-mcp" {
		t.Fatalf("first write: %v", first)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "metrics/net-revenue.md")); string(b) != newConcept {
		t.Fatal("the file is not byte-exact")
	}
	read := h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/net-revenue"})
	if !strings.Contains(read["frontmatter"].(string), "# a comment that must survive") {
		t.Fatal("comment lost")
	}

	again := h.mustCall(t, "write_concept", args)
	if again["replayed"] != true || again["change_id"] != first["change_id"] || again["result_revision"] != first["result_revision"] {
		t.Fatalf("identical request did not replay: %v", again)
	}

	// A -> B -> A: the last is a new write, not a stale replay.
	b := strings.Replace(newConcept, "Net of returns.", "Net of returns and refunds.", 1)
	second := h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/net-revenue", "content": b})
	if second["replayed"] != false || second["created"] != false || second["base_revision"] != first["result_revision"] {
		t.Fatalf("second write: %v", second)
	}
	back := h.mustCall(t, "write_concept", args)
	if back["replayed"] != false || back["changed"] != true {
		t.Fatalf("A->B->A replayed a stale receipt: %v", back)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "metrics/net-revenue.md")); string(got) != newConcept {
		t.Fatal("A->B->A left the wrong content")
	}
	receipts, _ := os.ReadDir(filepath.Join(dir, ".okf/receipts"))
	if len(receipts) != 2 {
		t.Fatalf("%d receipts, want 2 (A and B)", len(receipts))
	}
}

// TestWriteConceptRejectsWithoutWriting: every validation failure is a
// stable error and leaves the bundle, .okf/ included, untouched.
func TestWriteConceptRejectsWithoutWriting(t *testing.T) {
	h := newHarness(t, Config{})
	dir := dateBundle(t)
	existing := "metrics/bookings"
	cases := []struct {
		name, id, content, code, problem string
	}{
		{"no frontmatter", "m/x", "# body only\n", "VALIDATION_FAILED", "missing_frontmatter"},
		{"empty type", "m/x", "---\ntype: \"\"\n---\n", "VALIDATION_FAILED", "missing_type"},
		{"yaml syntax", "m/x", "---\ntype: [a\n---\n", "VALIDATION_FAILED", "yaml_syntax"},
		{"duplicate key", "m/x", "---\ntype: A\ntype: B\n---\n", "VALIDATION_FAILED", "duplicate_key"},
		{"alias", "m/x", "---\na: &x 1\ntype: *x\n---\n", "VALIDATION_FAILED", "alias_not_allowed"},
		{"bad status", "m/x", "---\ntype: A\nstatus: maybe\n---\n", "VALIDATION_FAILED", "bad_status"},
		{"bad verified", "m/x", "---\ntype: A\nverified: yes\n---\n", "VALIDATION_FAILED", "bad_verified"},
		{"mixed profile", "m/x", "---\ntype: A\nstale_after: 2026-01-01\nusage_window: { from: 2026-01-01T00:00:00Z, to: 2026-02-01T00:00:00Z }\n---\n", "VALIDATION_FAILED", "temporal_profile_mixed"},
		{"profile mismatch", existing, "---\ntype: Metric\nstale_after: 2027-01-01T00:00:00Z\n---\n", "VALIDATION_FAILED", "temporal_profile_mismatch"},
		{"unterminated", "m/x", "---\ntype: A\n", "VALIDATION_FAILED", "unterminated_frontmatter"},
		{"reserved id", "metrics/index", "---\ntype: A\n---\n", "INVALID_ARGUMENT", ""},
		{"escaping id", "../outside", "---\ntype: A\n---\n", "INVALID_ARGUMENT", ""},
		{"store id", ".okf/receipts/x", "---\ntype: A\n---\n", "INVALID_ARGUMENT", ""},
	}
	before := snapshotTree(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, derr := h.call(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": c.id, "content": c.content})
			wantCode(t, derr, registryCode(c.code))
			if c.problem != "" {
				probs, _ := derr.Details["problems"].([]map[string]any)
				if len(probs) == 0 || probs[0]["code"] != c.problem {
					t.Fatalf("problems %v, want %s", derr.Details["problems"], c.problem)
				}
			}
			if strings.Contains(derr.Message, dir) {
				t.Fatal("error message contains the absolute path")
			}
		})
	}
	after := snapshotTree(t, dir)
	if len(after) != len(before) {
		t.Fatalf("a rejected write changed the tree (%d -> %d entries)", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("a rejected write changed %s", k)
		}
	}
}

// TestDeclaredBundleRefusesLegacyKeys: a bundle that declares 0.2 gets no
// new v0.1 timestamp keys.
func TestDeclaredBundleRefusesLegacyKeys(t *testing.T) {
	h := newHarness(t, Config{})
	dir := genBundle(t, 3)
	_, derr := h.call(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "x", "content": "---\ntype: A\ntimestamp: '2026-01-01T00:00:00+00:00'\n---\n"})
	wantCode(t, derr, "VALIDATION_FAILED")
}

func TestExposure(t *testing.T) {
	for _, op := range Operations(Config{}) {
		if !op.ExposedOn(registry.MCPStdio) || op.ExposedOn(registry.MCPHTTP) || op.ExposedOn(registry.Actions) {
			t.Errorf("%s: exposure %v, want stdio only", op.Name, op.Exposure)
		}
	}
	for _, op := range Operations(Config{AllowedRoots: []string{"/srv/bundles"}}) {
		if !op.ExposedOn(registry.MCPStdio) || !op.ExposedOn(registry.MCPHTTP) || op.ExposedOn(registry.Actions) {
			t.Errorf("%s: exposure %v, want stdio and HTTP, never Actions", op.Name, op.Exposure)
		}
	}
	h := newHarness(t, Config{AllowedRoots: []string{"/srv/bundles"}})
	_, derr := h.callOn(t, registry.Actions, "list_concepts", map[string]any{"bundle_path": "/srv/bundles/x"})
	wantCode(t, derr, "NOT_EXPOSED")
}

// TestAllowedRoots: a path outside the roots is refused before any file is
// touched, even one that does not exist.
func TestAllowedRoots(t *testing.T) {
	inside := genBundle(t, 2)
	outside := ownBundle(t, "v0.2-date/fjord_support")
	h := newHarness(t, Config{AllowedRoots: []string{inside}})
	h.mustCall(t, "list_concepts", map[string]any{"bundle_path": inside})
	for _, name := range []string{"list_concepts", "read_concept", "search_concepts", "get_neighbors", "validate_bundle", "write_concept"} {
		args := map[string]any{"bundle_path": outside, "concept_id": "x", "query": "x", "content": "---\ntype: A\n---\n"}
		trimmed := map[string]any{}
		for _, k := range requiredArgs[name] {
			trimmed[k] = args[k]
		}
		_, derr := h.callOn(t, registry.MCPHTTP, name, trimmed)
		wantCode(t, derr, "PATH_REJECTED")
		if derr.Details["reason"] != "outside_allowed_roots" {
			t.Fatalf("%s: reason %v", name, derr.Details["reason"])
		}
		trimmed["bundle_path"] = "/nonexistent/elsewhere"
		_, derr = h.callOn(t, registry.MCPHTTP, name, trimmed)
		if derr == nil || derr.Details["reason"] != "outside_allowed_roots" {
			t.Fatalf("%s on a missing path outside the roots: %v (must be refused before any file access)", name, derr)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, ".okf")); !os.IsNotExist(err) {
		t.Fatal("a refused write touched the bundle")
	}
}

var requiredArgs = map[string][]string{
	"list_concepts":   {"bundle_path"},
	"read_concept":    {"bundle_path", "concept_id"},
	"search_concepts": {"bundle_path", "query"},
	"get_neighbors":   {"bundle_path", "concept_id"},
	"validate_bundle": {"bundle_path"},
	"write_concept":   {"bundle_path", "concept_id", "content"},
}
