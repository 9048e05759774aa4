package okfops

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

func temporalArgs(dir string, ms ...map[string]any) map[string]any {
	list := make([]any, len(ms))
	for i, m := range ms {
		list[i] = m
	}
	return map[string]any{"bundle_path": dir, "mappings": list}
}

func temporalApplyArgs(prev, args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	out["base_revision"] = prev["base_revision"]
	out["plan_digest"] = prev["plan_digest"]
	return out
}

// midnightMappings maps every date to midnight UTC of the same day.
func midnightMappings(dates []any) []map[string]any {
	var ms []map[string]any
	for _, d := range dates {
		ms = append(ms, map[string]any{"date": d, "instant": d.(string) + "T00:00:00Z"})
	}
	return ms
}

func dateBundle(t *testing.T) string {
	return ownBundle(t, dateFixture)
}

// upgradableArgs previews dir without mappings and returns arguments that
// map every unmapped date to midnight UTC.
func upgradableArgs(t *testing.T, h *harness, dir string) map[string]any {
	t.Helper()
	prev := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir))
	if prev["status"] != "incomplete" {
		t.Fatalf("preview without mappings: %v", prev["status"])
	}
	return temporalArgs(dir, midnightMappings(prev["unmapped_dates"].([]any))...)
}

func assertNoWrite(t *testing.T, before map[string]string, dir string) {
	t.Helper()
	after := snapshotTree(t, dir)
	if len(after) != len(before) {
		t.Fatalf("tree changed: %d entries, was %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed", k)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".okf")); !os.IsNotExist(err) {
		t.Fatalf(".okf exists: %v", err)
	}
}

var midnightRE = regexp.MustCompile(`(\d{4}-\d{2}-\d{2})T00:00:00Z`)

// profileLineRE matches a frontmatter line holding a profile field value.
var profileLineRE = regexp.MustCompile(`^[+-](stale_after|\s+last_modified|usage_window): `)

func TestTemporalPreviewWritesNothing(t *testing.T) {
	h := newHarness(t, Config{})
	dir := dateBundle(t)
	before := snapshotTree(t, dir)
	args := upgradableArgs(t, h, dir)
	for _, a := range []map[string]any{args, temporalArgs(dir), temporalArgs(dir, map[string]any{"date": "2026-02-30", "instant": "2026-02-30T00:00:00Z"})} {
		h.mustCall(t, "preview_temporal_upgrade", a)
	}
	assertNoWrite(t, before, dir)
}

func TestTemporalNoopIncompleteRejected(t *testing.T) {
	h := newHarness(t, Config{})
	inst := ownBundle(t, instantBundle)
	before := snapshotTree(t, inst)
	noop := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(inst, map[string]any{"date": "2026-09-30", "instant": "2026-09-30T00:00:00Z"}))
	if noop["status"] != "noop" || noop["plan_digest"] != nil || noop["result_revision"] != nil || len(noop["affected_paths"].([]any)) != 0 {
		t.Fatalf("instant bundle: %v", noop)
	}
	assertNoWrite(t, before, inst)

	dir := dateBundle(t)
	partial := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir, map[string]any{"date": "2026-09-30", "instant": "2026-09-30T00:00:00Z"}))
	if partial["status"] != "incomplete" || partial["plan_digest"] != nil {
		t.Fatalf("partial mappings: %v", partial)
	}
	for _, d := range partial["unmapped_dates"].([]any) {
		if d == "2026-09-30" {
			t.Fatal("a mapped date is listed as unmapped")
		}
	}
	_, derr := h.call(t, "apply_temporal_upgrade", map[string]any{"bundle_path": dir,
		"mappings":      []any{map[string]any{"date": "2026-09-30", "instant": "2026-09-30T00:00:00Z"}},
		"base_revision": partial["base_revision"], "plan_digest": "sha256:" + strings.Repeat("0", 64)})
	wantCode(t, derr, domainerr.PlanMismatch)

	good := map[string]any{"date": "2026-09-30", "instant": "2026-09-30T00:00:00Z"}
	cases := []struct {
		name    string
		mapping []map[string]any
		code    string
		index   float64
	}{
		{"bad date", []map[string]any{good, {"date": "2026-02-30", "instant": "2026-02-30T00:00:00Z"}}, "bad_date", 1},
		{"not a date", []map[string]any{{"date": "2026-09-30T00:00:00Z", "instant": "2026-09-30T00:00:00Z"}}, "bad_date", 0},
		{"no offset", []map[string]any{{"date": "2026-09-30", "instant": "2026-09-30T00:00:00"}}, "bad_instant", 0},
		{"day change", []map[string]any{good, {"date": "2026-03-10", "instant": "2026-03-11T00:00:00Z"}}, "mapping_changes_day", 1},
		{"offset moves the day", []map[string]any{{"date": "2026-09-30", "instant": "2026-10-01T04:00:00+05:00"}}, "mapping_changes_day", 0},
		{"conflicting", []map[string]any{good, {"date": "2026-09-30", "instant": "2026-09-30T09:00:00+09:00"}}, "conflicting_mappings", 1},
		{"conflicting scoped", []map[string]any{
			{"date": "2026-09-30", "instant": "2026-09-30T00:00:00Z", "concept_id": "metrics/bookings"},
			good,
			{"date": "2026-09-30", "instant": "2026-09-30T01:00:00Z", "concept_id": "metrics/bookings"}}, "conflicting_mappings", 2},
		{"bad field", []map[string]any{{"date": "2026-09-30", "instant": "2026-09-30T00:00:00Z", "field": "title"}}, "bad_field", 0},
		{"bad concept", []map[string]any{{"date": "2026-09-30", "instant": "2026-09-30T00:00:00Z", "concept_id": "../x"}}, "bad_concept_id", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir, c.mapping...))
			if prev["status"] != "rejected" || prev["plan_digest"] != nil || len(prev["diff"].([]any)) != 0 {
				t.Fatalf("preview: %v", prev)
			}
			found := false
			for _, d := range prev["diagnostics"].([]any) {
				dm := d.(map[string]any)
				if dm["code"] == c.code && dm["index"] == c.index && dm["severity"] == "error" {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s diagnostic at %v: %v", c.code, c.index, prev["diagnostics"])
			}
		})
	}
	// Identical duplicates are not a conflict and do not change the request.
	one := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir, good))
	two := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir, good, good))
	if two["status"] != "incomplete" || one["request_digest"] != two["request_digest"] {
		t.Fatalf("duplicate mapping: %v vs %v", one, two)
	}
}

func TestTemporalRejectsUneditableValue(t *testing.T) {
	h := newHarness(t, Config{})
	dir := dateBundle(t)
	p := filepath.Join(dir, "metrics/bookings.md")
	raw, _ := os.ReadFile(p)
	tagged := strings.Replace(string(raw), "stale_after: 2026-09-30", "stale_after: !!str 2026-09-30", 1)
	if tagged == string(raw) {
		t.Fatal("fixture changed")
	}
	os.WriteFile(p, []byte(tagged), 0o644)
	args := upgradableArgs(t, h, dir)
	prev := h.mustCall(t, "preview_temporal_upgrade", args)
	if prev["status"] != "rejected" || prev["plan_digest"] != nil {
		t.Fatalf("preview: %v", prev)
	}
	found := false
	for _, d := range prev["diagnostics"].([]any) {
		dm := d.(map[string]any)
		found = found || (dm["concept_id"] == "metrics/bookings" && dm["code"] == "ambiguous_yaml" && dm["severity"] == "error")
	}
	if !found {
		t.Fatalf("diagnostics: %v", prev["diagnostics"])
	}
}

func TestTemporalInvalidValuesLeftAlone(t *testing.T) {
	h := newHarness(t, Config{})
	dir := dateBundle(t)
	p := filepath.Join(dir, "policies/fleet-standard.md")
	raw, _ := os.ReadFile(p)
	bad := strings.Replace(string(raw), "stale_after: 2026-09-30", "stale_after: next spring", 1)
	os.WriteFile(p, []byte(bad), 0o644)
	args := upgradableArgs(t, h, dir)
	prev := h.mustCall(t, "preview_temporal_upgrade", args)
	if prev["status"] != "applicable" {
		t.Fatalf("preview: %v", prev)
	}
	found := false
	for _, d := range prev["diagnostics"].([]any) {
		dm := d.(map[string]any)
		found = found || (dm["concept_id"] == "policies/fleet-standard" && dm["code"] == "invalid_temporal_left" && dm["severity"] == "info")
	}
	if !found {
		t.Fatalf("diagnostics: %v", prev["diagnostics"])
	}
	h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
	if now, _ := os.ReadFile(p); string(now) != bad {
		t.Fatal("an invalid value's concept was edited")
	}
}

func TestTemporalApplyOutcomes(t *testing.T) {
	h := newHarness(t, Config{})

	t.Run("applied and replayed", func(t *testing.T) {
		dir := dateBundle(t)
		args := upgradableArgs(t, h, dir)
		prev := h.mustCall(t, "preview_temporal_upgrade", args)
		res := h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
		if res["status"] != "applied" || res["actor"] != Actor || res["base_revision"] != prev["base_revision"] {
			t.Fatalf("apply: %v", res)
		}
		again := h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
		if again["status"] != "replayed" || again["change_id"] != res["change_id"] || again["result_revision"] != res["result_revision"] {
			t.Fatalf("replay: %v", again)
		}
		// The revision moves on; the identical apply still replays and
		// does not undo the later write.
		h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/net-revenue", "content": newConcept})
		late := h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
		if late["status"] != "replayed" || late["change_id"] != res["change_id"] {
			t.Fatalf("replay after revision moved: %v", late)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "metrics/net-revenue.md")); string(got) != newConcept {
			t.Fatal("the later write was lost")
		}
	})

	t.Run("revision conflict", func(t *testing.T) {
		dir := dateBundle(t)
		args := upgradableArgs(t, h, dir)
		prev := h.mustCall(t, "preview_temporal_upgrade", args)
		p := filepath.Join(dir, "metrics/bookings.md")
		raw, _ := os.ReadFile(p)
		external := string(raw) + "\nAn external edit.\n"
		if err := os.WriteFile(p, []byte(external), 0o644); err != nil {
			t.Fatal(err)
		}
		_, derr := h.call(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
		wantCode(t, derr, domainerr.RevisionConflict)
		if !derr.Retryable {
			t.Fatal("revision conflict is not retryable")
		}
		if got, _ := os.ReadFile(p); string(got) != external {
			t.Fatal("the external write was overwritten")
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "tables/rentals.md")); !strings.Contains(string(got), "stale_after: 2026-09-30\n") {
			t.Fatal("a conflicting apply wrote another file")
		}
	})

	t.Run("plan mismatch", func(t *testing.T) {
		dir := dateBundle(t)
		args := upgradableArgs(t, h, dir)
		prev := h.mustCall(t, "preview_temporal_upgrade", args)
		before := snapshotTree(t, dir)
		other := temporalArgs(dir, append(toMaps(args["mappings"]),
			map[string]any{"date": "2026-09-30", "instant": "2026-09-30T12:00:00Z", "concept_id": "metrics/bookings"})...)
		_, derr := h.call(t, "apply_temporal_upgrade", temporalApplyArgs(prev, other))
		wantCode(t, derr, domainerr.PlanMismatch)

		tampered := temporalApplyArgs(prev, args)
		d := prev["plan_digest"].(string)
		last := "0"
		if strings.HasSuffix(d, "0") {
			last = "1"
		}
		tampered["plan_digest"] = d[:len(d)-1] + last
		_, derr = h.call(t, "apply_temporal_upgrade", tampered)
		wantCode(t, derr, domainerr.PlanMismatch)

		// An incomplete request is never apply-ready.
		_, derr = h.call(t, "apply_temporal_upgrade", map[string]any{"bundle_path": dir, "mappings": []any{},
			"base_revision": prev["base_revision"], "plan_digest": prev["plan_digest"]})
		wantCode(t, derr, domainerr.PlanMismatch)
		for k, v := range snapshotTree(t, dir) {
			if k != ".okf" && !strings.HasPrefix(k, ".okf/") && before[k] != v {
				t.Fatalf("a mismatched apply changed %s", k)
			}
		}
	})
}

func toMaps(v any) []map[string]any {
	var out []map[string]any
	for _, m := range v.([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

func TestTemporalScopedMappings(t *testing.T) {
	h := newHarness(t, Config{})
	dir := dateBundle(t)
	global := toMaps(upgradableArgs(t, h, dir)["mappings"])
	ms := append(global,
		map[string]any{"date": "2026-09-30", "instant": "2026-09-30T23:59:59+02:00", "concept_id": "metrics/bookings", "field": "stale_after"},
		map[string]any{"date": "2026-09-30", "instant": "2026-09-30T18:00:00Z", "concept_id": "metrics/bookings"},
		map[string]any{"date": "2026-03-10", "instant": "2026-03-10T12:00:00Z", "concept_id": "tables/rentals"},
		map[string]any{"date": "2026-03-10", "instant": "2026-03-10T01:00:00Z", "concept_id": "tables/rentals", "field": "sources[0].last_modified"},
		map[string]any{"date": "2026-01-01", "instant": "2026-01-01T08:00:00-05:00", "field": "usage_window.from"},
		map[string]any{"date": "2026-03-10", "instant": "2026-03-10T06:30:00+01:00", "field": "sources[1].last_modified"},
	)
	args := temporalArgs(dir, ms...)
	prev := h.mustCall(t, "preview_temporal_upgrade", args)
	if prev["status"] != "applicable" {
		t.Fatalf("preview: %v", prev)
	}
	h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
	read := func(rel string) string {
		b, _ := os.ReadFile(filepath.Join(dir, rel))
		return string(b)
	}
	bookings, rentals, util := read("metrics/bookings.md"), read("tables/rentals.md"), read("metrics/utilisation.md")
	for _, c := range []struct{ doc, want string }{
		{bookings, "stale_after: 2026-09-30T23:59:59+02:00\n"},                                   // concept+field beats concept and global
		{bookings, "last_modified: 2026-03-10T00:00:00Z\n"},                                      // field-scoped sources[1] does not apply to sources[0]
		{rentals, "stale_after: 2026-09-30T00:00:00Z\n"},                                         // global
		{rentals, "last_modified: 2026-03-10T01:00:00Z\n"},                                       // concept+field
		{rentals, "last_modified: 2026-03-10T12:00:00Z\n"},                                       // concept beats field-only
		{rentals, "usage_window: { from: 2026-01-01T08:00:00-05:00, to: 2026-03-31T00:00:00Z }"}, // field beats global
		{util, "stale_after: 2026-09-30T00:00:00Z\n"},                                            // another concept keeps the global
		{util, "last_modified: 2026-03-10T06:30:00+01:00\n"},                                     // field-only beats global
	} {
		if !strings.Contains(c.doc, c.want) {
			t.Errorf("missing %q", c.want)
		}
	}
	// Mapping order does not change the request.
	rev := append([]map[string]any(nil), ms...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	dir2 := dateBundle(t)
	a := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir2, ms...))
	b := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir2, rev...))
	if a["request_digest"] != b["request_digest"] || a["plan_digest"] != b["plan_digest"] {
		t.Fatal("mapping order changed the request digest")
	}
}

const styledConcept = "---\n" +
	"type: Metric\n" +
	"title: Styled\n" +
	"stale_after: \"2026-12-31\" # quoted, with a comment\n" +
	"usage_window:\n" +
	"  from: '2026-04-01'\n" +
	"  to: 2026-06-30\n" +
	"sources: [{ id: a, resource: https://example.com/a, last_modified: 2026-06-15 }, { id: b, resource: https://example.com/b, last_modified: 2026-06-15T09:00:00+02:00 }]\n" +
	"---\n\nstale_after: 2026-12-31 in the body stays.\n"

const styledWant = "---\n" +
	"type: Metric\n" +
	"title: Styled\n" +
	"stale_after: 2026-12-31T00:00:00Z # quoted, with a comment\n" +
	"usage_window:\n" +
	"  from: 2026-04-01T00:00:00Z\n" +
	"  to: 2026-06-30T00:00:00Z\n" +
	"sources: [{ id: a, resource: https://example.com/a, last_modified: 2026-06-15T00:00:00Z }, { id: b, resource: https://example.com/b, last_modified: 2026-06-15T09:00:00+02:00 }]\n" +
	"---\n\nstale_after: 2026-12-31 in the body stays.\n"

func styledBundle(t *testing.T, extra map[string]string) string {
	t.Helper()
	files := map[string]string{"index.md": "---\nokf_version: \"0.2\"\n---\n# Index\n", "metrics/styled.md": styledConcept}
	for k, v := range extra {
		files[k] = v
	}
	return okftest.Write(t, files)
}

func TestTemporalStyledScalars(t *testing.T) {
	h := newHarness(t, Config{})
	dir := styledBundle(t, nil)
	args := upgradableArgs(t, h, dir)
	prev := h.mustCall(t, "preview_temporal_upgrade", args)
	if prev["status"] != "applicable" {
		t.Fatalf("preview: %v", prev)
	}
	h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
	if got, _ := os.ReadFile(filepath.Join(dir, "metrics/styled.md")); string(got) != styledWant {
		t.Fatalf("got\n%s", got)
	}
}

func TestTemporalRejectsUnsafeConcepts(t *testing.T) {
	h := newHarness(t, Config{})
	for _, c := range []struct{ name, content, code string }{
		{"crlf", strings.ReplaceAll(styledConcept, "\n", "\r\n"), "crlf_frontmatter"},
		{"yaml syntax", "---\ntype: [unclosed\nstale_after: 2026-12-31\n---\n", "yaml_syntax"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := styledBundle(t, map[string]string{"other/bad.md": c.content})
			before := snapshotTree(t, dir)
			prev := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir, midnightMappings([]any{"2026-04-01", "2026-06-15", "2026-06-30", "2026-12-31"})...))
			if prev["status"] != "rejected" || prev["plan_digest"] != nil {
				t.Fatalf("preview: %v", prev)
			}
			found := false
			for _, d := range prev["diagnostics"].([]any) {
				dm := d.(map[string]any)
				found = found || (dm["concept_id"] == "other/bad" && dm["code"] == c.code)
			}
			if !found {
				t.Fatalf("diagnostics: %v", prev["diagnostics"])
			}
			assertNoWrite(t, before, dir)
		})
	}
}
