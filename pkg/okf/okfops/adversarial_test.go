package okfops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/okf/doc"
)

// advIndex is the root index.md of the small bundles below: it declares
// 0.2 so no operation wants to touch it.
const advIndex = "---\nokf_version: \"0.2\"\n---\n# Concepts\n\n* [c](c.md) - The concept under test.\n"

// advBundle writes a bundle holding one concept "c" with content.
func advBundle(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.md"), []byte(advIndex), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	advSetStable    = map[string]any{"op": "set_lifecycle", "status": "stable"}
	advSetGenerated = map[string]any{"op": "set_generated", "by": "process:p", "at": "2026-08-01T00:00:00Z"}
	advEnsure       = map[string]any{"op": "ensure_verification", "by": "process:p", "at": "2026-08-01T00:00:00Z"}
	advRemove       = map[string]any{"op": "remove_verification", "by": "human:a"}
	advPutSource    = map[string]any{"op": "put_source", "source": map[string]any{"id": "c", "resource": "https://x/c"}}
	advStaleAfter   = map[string]any{"op": "set_lifecycle", "stale_after": "2027-06-30T00:00:00Z"}
)

// advCase is one adversarial frontmatter and one operation on it. Either
// the preview is rejected with code, or it is applicable and the applied
// file is exactly want. writeCode is the problem write_concept reports for
// the same document ("" when it accepts it).
type advCase struct {
	name      string
	content   string
	op        map[string]any
	code      string
	want      string
	writeCode string
}

var advCases = []advCase{
	{name: "alias", content: "---\ntype: &t Metric\ntitle: *t\nstatus: draft\n---\nbody\n",
		op: advSetStable, code: "alias_not_allowed", writeCode: "alias_not_allowed"},
	{name: "anchor on the target scalar", content: "---\ntype: Metric\nstatus: &s draft\n---\nbody\n",
		op: advSetStable, code: "ambiguous_yaml"},
	{name: "anchor on the target mapping", content: "---\ntype: Metric\ngenerated: &g { by: x/1, at: 2026-01-01T00:00:00Z }\n---\nbody\n",
		op: advSetGenerated, code: "ambiguous_yaml"},
	{name: "anchor on another key", content: "---\ntype: Metric\ntitle: &t Revenue\nstatus: draft\n---\nbody\n",
		op: advSetStable, want: "---\ntype: Metric\ntitle: &t Revenue\nstatus: stable\n---\nbody\n"},
	{name: "merge key", content: "---\ntype: Metric\ngenerated:\n  <<: {by: x/1}\n  at: 2026-01-01T00:00:00Z\n---\nbody\n",
		op: advSetGenerated, code: "merge_key_not_allowed", writeCode: "merge_key_not_allowed"},
	{name: "duplicate key", content: "---\ntype: Metric\nstatus: draft\nstatus: stable\n---\nbody\n",
		op: map[string]any{"op": "set_lifecycle", "status": "deprecated"}, code: "duplicate_key", writeCode: "duplicate_key"},
	{name: "CRLF frontmatter", content: "---\r\ntype: Metric\r\nstatus: draft\r\n---\r\nbody\r\n",
		op: advSetStable, code: "crlf_frontmatter"},
	{name: "CRLF body only", content: "---\ntype: Metric\nstatus: draft\n---\r\nbody\r\nmore\r\n",
		op: advSetStable, want: "---\ntype: Metric\nstatus: stable\n---\r\nbody\r\nmore\r\n"},
	{name: "str tag on the target", content: "---\ntype: Metric\nstatus: !!str draft\n---\nbody\n",
		op: advSetStable, code: "ambiguous_yaml"},
	{name: "map tag on the target", content: "---\ntype: Metric\ngenerated: !!map { by: x/1, at: 2026-01-01T00:00:00Z }\n---\nbody\n",
		op: advSetGenerated, code: "ambiguous_yaml"},
	{name: "str tag on stale_after", content: "---\ntype: Metric\nstale_after: !!str 2026-12-31T00:00:00Z\n---\nbody\n",
		op: advStaleAfter, code: "ambiguous_yaml"},
	{name: "flow mapping root, scalar in place", content: "---\n{type: Metric, status: draft}\n---\nbody\n",
		op: advSetStable, want: "---\n{type: Metric, status: stable}\n---\nbody\n"},
	{name: "flow mapping root, new key", content: "---\n{type: Metric, status: draft}\n---\nbody\n",
		op: advSetGenerated, code: "result_invalid"},
	{name: "indented root, scalar in place", content: "---\n  type: Metric\n  status: draft\n---\nbody\n",
		op: advSetStable, want: "---\n  type: Metric\n  status: stable\n---\nbody\n"},
	{name: "indented root, sequence", content: "---\n  type: Metric\n  sources:\n    - { id: a, resource: https://x/a }\n---\nbody\n",
		op: advPutSource, code: "ambiguous_yaml"},
	{name: "tab after the colon", content: "---\ntype:\tMetric\nstatus:\tdraft\n---\nbody\n",
		op: advSetStable, want: "---\ntype:\tMetric\nstatus:\tstable\n---\nbody\n"},
	{name: "tab inside a flow mapping", content: "---\ntype: Metric\ngenerated: {by: x/1,\tat: 2026-01-01T00:00:00Z}\nstatus: draft\n---\nbody\n",
		op: advSetGenerated, want: "---\ntype: Metric\ngenerated: { by: process:p, at: 2026-08-01T00:00:00Z }\nstatus: draft\n---\nbody\n"},
	{name: "tab indentation", content: "---\ntype: Metric\nverified:\n\t- {by: human:a, at: 2026-07-01T09:00:00Z}\n---\nbody\n",
		op: advEnsure, code: "yaml_syntax", writeCode: "yaml_syntax"},
	{name: "flow sources with comments", content: "---\ntype: Metric\nsources: [ # first\n  {id: a, resource: 'https://x/a'}, # second\n  {id: b, resource: 'https://x/b'}\n  ]\n---\nbody\n",
		op: advPutSource, code: "lossy_rewrite"},
	{name: "flow sources with an unknown field", content: "---\ntype: Metric\nsources: [{id: a, resource: 'https://x/a', note: keep-me}]\n---\nbody\n",
		op: advPutSource, code: "lossy_rewrite"},
	{name: "flow sources, plain", content: "---\ntype: Metric\nsources: [{id: a, resource: 'https://x/a'}]\nstatus: draft\n---\nbody\n",
		op: advPutSource, want: "---\ntype: Metric\nsources:\n  - { id: a, resource: https://x/a }\n  - { id: c, resource: https://x/c }\nstatus: draft\n---\nbody\n"},
	{name: "flow sources continued at column 1", content: "---\ntype: Metric\nsources: [{id: a,\nresource: https://x/a}]\n---\nbody\n",
		op: advPutSource, code: "ambiguous_yaml"},
	{name: "flow generated continued at column 1", content: "---\ntype: Metric\ngenerated: {by: x/1,\nat: 2026-01-01T00:00:00Z}\n---\nbody\n",
		op: advSetGenerated, code: "ambiguous_yaml"},
	{name: "flow verified continued at column 1", content: "---\ntype: Metric\nverified: {by: human:a,\nat: 2026-07-01T09:00:00Z}\n---\nbody\n",
		op: advRemove, code: "ambiguous_yaml"},
	{name: "comment at column 1 inside a list", content: "---\ntype: Metric\nverified:\n  - {by: human:a, at: 2026-07-01T09:00:00Z}\n# interleaved\n  - {by: human:b, at: 2026-07-02T09:00:00Z}\nstatus: draft\n---\nbody\n",
		op: advEnsure, code: "ambiguous_yaml"},
	{name: "comment at column 1 after a list", content: "---\ntype: Metric\nverified:\n  - {by: human:a, at: 2026-07-01T09:00:00Z}\n# about status\nstatus: draft\n---\nbody\n",
		op: advEnsure, want: "---\ntype: Metric\nverified:\n  - {by: human:a, at: 2026-07-01T09:00:00Z}\n  - { by: process:p, at: 2026-08-01T00:00:00Z }\n# about status\nstatus: draft\n---\nbody\n"},
	{name: "verified scalar", content: "---\ntype: Metric\nverified: yes\n---\nbody\n",
		op: advEnsure, code: "bad_verified", writeCode: "bad_verified"},
	{name: "verified entry without by, ensure", content: "---\ntype: Metric\nverified:\n  - { at: 2026-01-01T00:00:00Z }\n  - { by: human:a, at: 2026-07-01T09:00:00Z }\n---\nbody\n",
		op: advEnsure, code: "bad_verified", writeCode: "bad_verified"},
	{name: "verified entry without by, remove", content: "---\ntype: Metric\nverified:\n  - { at: 2026-01-01T00:00:00Z }\n  - { by: human:a, at: 2026-07-01T09:00:00Z }\n---\nbody\n",
		op: advRemove, code: "bad_verified", writeCode: "bad_verified"},
	{name: "verified mapping with an unknown field", content: "---\ntype: Metric\nverified: { by: human:a, at: 2026-07-01T09:00:00Z, note: keep-me }\n---\nbody\n",
		op: advEnsure, code: "lossy_rewrite"},
	{name: "verified flow list with an unknown field", content: "---\ntype: Metric\nverified: [{by: human:a, at: 2026-07-01T09:00:00Z, note: keep-me}]\n---\nbody\n",
		op: advEnsure, code: "lossy_rewrite"},
	{name: "verified mapping with a comment", content: "---\ntype: Metric\nverified: { by: human:a, at: 2026-07-01T09:00:00Z } # signed off on paper\n---\nbody\n",
		op: advEnsure, code: "lossy_rewrite"},
	{name: "verified mapping (spec form)", content: "---\ntype: Metric\nverified: { by: human:a, at: 2026-07-01T09:00:00Z }\n---\nbody\n",
		op: advEnsure, want: "---\ntype: Metric\nverified:\n  - { by: human:a, at: 2026-07-01T09:00:00Z }\n  - { by: process:p, at: 2026-08-01T00:00:00Z }\n---\nbody\n"},
	{name: "sources with a scalar entry", content: "---\ntype: Metric\nsources:\n  - https://x/a\n  - { id: b, resource: https://x/b }\n---\nbody\n",
		op: advPutSource, code: "bad_sources", writeCode: "bad_sources"},
	{name: "sources scalar", content: "---\ntype: Metric\nsources: https://x/a\n---\nbody\n",
		op: advPutSource, code: "bad_sources", writeCode: "bad_sources"},
}

// TestAdversarialFrontmatterPatch: every adversarial document is either
// rejected with a stable diagnostic code (and cannot be applied) or gets an
// applicable plan whose applied result is exactly the expected bytes. Never
// an INTERNAL error (the harness fails on one), never a silent wrong edit.
func TestAdversarialFrontmatterPatch(t *testing.T) {
	h := newHarness(t, Config{})
	for _, c := range advCases {
		t.Run(c.name, func(t *testing.T) {
			dir := advBundle(t, c.content)
			op := map[string]any{"concept_id": "c"}
			for k, v := range c.op {
				op[k] = v
			}
			args := patchArgs(dir, op)
			before := snapshotTree(t, dir)
			prev, derr := h.call(t, "preview_concept_patch", args)
			if derr != nil {
				t.Fatalf("preview: %v %v", derr, derr.Details)
			}
			if !sameSnapshot(before, snapshotTree(t, dir)) {
				t.Fatal("the preview wrote something")
			}
			if c.code != "" {
				if prev["status"] != "rejected" || prev["plan_digest"] != nil || len(prev["affected_paths"].([]any)) != 0 {
					t.Fatalf("want a rejected preview with %s, got %v", c.code, prev)
				}
				if !hasDiag(prev, "", c.code) {
					t.Fatalf("diagnostics %v lack %s", prev["diagnostics"], c.code)
				}
				// A rejected preview has nothing to commit: no digest can
				// make an apply write.
				forged := applyArgs(map[string]any{"base_revision": prev["base_revision"], "plan_digest": "sha256:" + strings.Repeat("0", 64)}, args)
				_, derr := h.call(t, "apply_concept_patch", forged)
				wantCode(t, derr, "PLAN_MISMATCH")
				if !sameSnapshot(before, snapshotTree(t, dir)) {
					t.Fatal("a rejected plan wrote something")
				}
				return
			}
			if prev["status"] != "applicable" {
				t.Fatalf("want applicable, got %v", prev)
			}
			res := h.mustCall(t, "apply_concept_patch", applyArgs(prev, args))
			if res["status"] != "applied" {
				t.Fatalf("apply: %v", res)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "c.md"))
			if string(got) != c.want {
				t.Fatalf("applied result\n%q\nwant\n%q", got, c.want)
			}
			if _, err := doc.Parse(got, doc.DefaultLimits); err != nil {
				t.Fatalf("the result does not parse: %v", err)
			}
			if idx, _ := os.ReadFile(filepath.Join(dir, "index.md")); string(idx) != advIndex {
				t.Fatal("another file changed")
			}
		})
	}
}

// TestAdversarialWriteConcept: write_concept refuses what the parser or
// the family checks refuse, as VALIDATION_FAILED with the problem code,
// and writes nothing.
func TestAdversarialWriteConcept(t *testing.T) {
	h := newHarness(t, Config{})
	seen := map[string]bool{}
	for _, c := range advCases {
		if seen[c.content] {
			continue
		}
		seen[c.content] = true
		t.Run(c.name, func(t *testing.T) {
			dir := advBundle(t, "---\ntype: Metric\n---\n")
			before := snapshotTree(t, dir)
			out, derr := h.call(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "w", "content": c.content})
			if c.writeCode == "" {
				if derr != nil {
					t.Fatalf("write_concept refused a parseable document: %v %v", derr, derr.Details)
				}
				if got, _ := os.ReadFile(filepath.Join(dir, "w.md")); string(got) != c.content || out["created"] != true {
					t.Fatal("the written file is not byte-exact")
				}
				return
			}
			wantCode(t, derr, "VALIDATION_FAILED")
			probs, _ := derr.Details["problems"].([]map[string]any)
			if len(probs) == 0 || probs[0]["code"] != c.writeCode {
				t.Fatalf("problems %v, want %s", derr.Details["problems"], c.writeCode)
			}
			if !sameSnapshot(before, snapshotTree(t, dir)) {
				t.Fatal("a refused write changed the bundle")
			}
		})
	}
}

// advLegacy are v0.1 concepts (with a legacy timestamp or a # Citations
// section) that the migration cannot convert safely; each must block the
// whole migration with the concept named in a diagnostic.
var advLegacy = []struct {
	name, content, code string
}{
	{"alias", "---\ntype: &t Metric\ntitle: *t\ntimestamp: '2026-05-28T22:50:09+00:00'\n---\nbody\n", "concept_unparseable"},
	{"merge key", "---\ntype: Metric\nextra:\n  <<: {a: 1}\ntimestamp: '2026-05-28T22:50:09+00:00'\n---\nbody\n", "concept_unparseable"},
	{"duplicate key", "---\ntype: Metric\ntimestamp: '2026-05-28T22:50:09+00:00'\ntimestamp: '2026-05-29T22:50:09+00:00'\n---\nbody\n", "concept_unparseable"},
	{"tab indentation", "---\ntype: Metric\ntags:\n\t- a\ntimestamp: '2026-05-28T22:50:09+00:00'\n---\nbody\n", "concept_unparseable"},
	{"CRLF", "---\r\ntype: Metric\r\ntimestamp: '2026-05-28T22:50:09+00:00'\r\n---\r\nbody\r\n", "crlf_frontmatter"},
	{"str tag on timestamp", "---\ntype: Metric\ntimestamp: !!str 2026-05-28T22:50:09+00:00\n---\nbody\n", "ambiguous_yaml"},
	{"anchor on timestamp", "---\ntype: Metric\ntimestamp: &ts '2026-05-28T22:50:09+00:00'\n---\nbody\n", "ambiguous_yaml"},
	{"flow mapping root", "---\n{type: Metric, timestamp: '2026-05-28T22:50:09+00:00'}\n---\nbody\n", "ambiguous_yaml"},
	{"indented root", "---\n  type: Metric\n  timestamp: '2026-05-28T22:50:09+00:00'\n---\nbody\n", "ambiguous_yaml"},
	{"flow sources with comments", "---\ntype: Metric\nsources: [ # kept\n  {id: a, resource: 'https://x/a'}\n  ]\n---\n\n# Citations\n- https://x/b\n", "lossy_rewrite"},
	{"flow sources with an unknown field", "---\ntype: Metric\nsources: [{id: a, resource: 'https://x/a', note: keep-me}]\n---\n\n# Citations\n- https://x/b\n", "lossy_rewrite"},
	{"flow sources continued at column 1", "---\ntype: Metric\nsources: [{id: a,\nresource: https://x/a}]\n---\n\n# Citations\n- https://x/b\n", "ambiguous_yaml"},
	{"comment at column 1 inside sources", "---\ntype: Metric\nsources:\n  - {id: a, resource: https://x/a}\n# interleaved\n  - {id: b, resource: https://x/b}\n---\n\n# Citations\n- https://x/c\n", "ambiguous_yaml"},
	{"sources scalar", "---\ntype: Metric\nsources: https://x/a\n---\n\n# Citations\n- https://x/b\n", "bad_sources"},
	{"timestamp without offset", "---\ntype: Metric\ntimestamp: '2026-05-28T22:50:09'\n---\nbody\n", "timestamp_not_instant"},
}

// TestAdversarialMigrationBlocked: one unsafe concept blocks the whole
// migration: no proof, no digest, nothing written, and an expected_source
// only apply is refused.
func TestAdversarialMigrationBlocked(t *testing.T) {
	h := newHarness(t, Config{})
	for _, c := range advLegacy {
		t.Run(c.name, func(t *testing.T) {
			dir := ownBundle(t, v01Bundle)
			if err := os.WriteFile(filepath.Join(dir, "references/adversarial.md"), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshotTree(t, dir)
			args := migrateArgs(dir, nil)
			prev := h.mustCall(t, "preview_v02_migration", args)
			if prev["status"] != "blocked" || prev["proof"] != nil || prev["plan_digest"] != nil || len(prev["affected_paths"].([]any)) != 0 {
				t.Fatalf("want blocked without proof or digest, got %v", prev)
			}
			if !hasDiag(prev, "references/adversarial", c.code) {
				t.Fatalf("diagnostics %v lack %s for the concept", prev["diagnostics"], c.code)
			}
			_, derr := h.call(t, "apply_v02_migration", migrateApply(prev, args))
			wantCode(t, derr, "INVALID_ARGUMENT")
			if !sameSnapshot(before, snapshotTree(t, dir)) {
				t.Fatal("a blocked migration wrote something")
			}
		})
	}
}

// TestAdversarialMigrationSafe: constructs the editor can handle are
// migrated exactly, keeping every byte it does not have to change.
func TestAdversarialMigrationSafe(t *testing.T) {
	h := newHarness(t, Config{})
	cases := []struct{ name, content, want string }{
		{"anchor on another key", "---\ntype: Metric\ntitle: &t Revenue\ntimestamp: '2026-05-28T22:50:09+00:00'\n---\nbody\n",
			"---\ntype: Metric\ntitle: &t Revenue\ngenerated: { by: process:okf-migration, at: 2026-05-28T22:50:09+00:00 }\n---\nbody\n"},
		{"tab after the colon", "---\ntype:\tMetric\ntimestamp:\t'2026-05-28T22:50:09+00:00'\nstatus:\tdraft\n---\nbody\n",
			"---\ntype:\tMetric\ngenerated: { by: process:okf-migration, at: 2026-05-28T22:50:09+00:00 }\nstatus:\tdraft\n---\nbody\n"},
		{"verified scalar left alone", "---\ntype: Metric\nverified: yes\ntimestamp: '2026-05-28T22:50:09+00:00'\n---\nbody\r\n",
			"---\ntype: Metric\nverified: yes\ngenerated: { by: process:okf-migration, at: 2026-05-28T22:50:09+00:00 }\n---\nbody\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := ownBundle(t, v01Bundle)
			p := filepath.Join(dir, "references/adversarial.md")
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			prev, args := migrateFully(t, h, dir)
			if res := h.mustCall(t, "apply_v02_migration", migrateApply(prev, args)); res["status"] != "applied" {
				t.Fatalf("apply: %v", res)
			}
			if got, _ := os.ReadFile(p); string(got) != c.want {
				t.Fatalf("migrated\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// hasDiag reports whether a preview carries an error diagnostic with code
// (for conceptID, when set).
func hasDiag(prev map[string]any, conceptID, code string) bool {
	for _, d := range prev["diagnostics"].([]any) {
		m := d.(map[string]any)
		if m["code"] == code && m["severity"] == "error" && (conceptID == "" || m["concept_id"] == conceptID) {
			return true
		}
	}
	return false
}

// sameSnapshot compares two snapshotTree results.
func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
