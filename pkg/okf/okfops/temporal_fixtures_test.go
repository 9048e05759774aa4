package okfops

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Temporal upgrades over whole fixture bundles: the project's own always,
// the spec authors' as TestConformance* (NOTEBRIDGE_OKF_FIXTURES).

// upgradeCase is a date-profile bundle and what its upgrade must show.
type upgradeCase struct {
	src           fixtureSource
	date, instant string   // the date bundle and its instant twin
	dates         []string // dates the unmapped preview must list
	diagnostics   []string // "<concept> <message>" unmapped diagnostics it must carry
	identical     []string // files equal to the instant twin after the upgrade
}

// TestTemporalUpgradeFixture upgrades the own date bundle; every concept
// differs from its instant twin only in the profile values, so every
// changed file must end byte-identical to the twin.
func TestTemporalUpgradeFixture(t *testing.T) {
	checkTemporalUpgrade(t, upgradeCase{
		src: ownSource(), date: dateFixture, instant: instantBundle,
		dates: []string{"2026-01-01", "2026-03-10", "2026-03-31", "2026-09-30"},
		diagnostics: []string{
			"tables/rentals usage_window.from: no mapping for date 2026-01-01",
			"metrics/bookings sources[0].last_modified: no mapping for date 2026-03-10",
		},
	})
}

// TestConformanceTemporalUpgrade upgrades the spec authors' date-profile
// acme_retail bundle (NOTEBRIDGE_OKF_FIXTURES).
func TestConformanceTemporalUpgrade(t *testing.T) {
	checkTemporalUpgrade(t, upgradeCase{
		src: authorsSource(t), date: "v0.2-date/acme_retail", instant: "v0.2-instant/acme_retail",
		dates: []string{"2026-04-01", "2026-06-15", "2026-06-30", "2026-07-01", "2026-12-31"},
		diagnostics: []string{
			"tables/orders usage_window.from: no mapping for date 2026-04-01",
			"metrics/revenue sources[0].last_modified: no mapping for date 2026-06-15",
		},
		identical: []string{"metrics/revenue.md", "metrics/gross-margin.md", "tables/orders.md", "policies/margin-standard.md", "policies/revenue-recognition.md"},
	})
}

func checkTemporalUpgrade(t *testing.T, c upgradeCase) {
	h := newHarness(t, Config{})
	dir := c.src.copy(t, c.date)
	orig := snapshotTree(t, dir)

	empty := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir))
	if empty["status"] != "incomplete" || empty["plan_digest"] != nil || empty["result_revision"] != nil {
		t.Fatalf("preview without mappings: %v", empty)
	}
	dates := empty["unmapped_dates"].([]any)
	for _, want := range c.dates {
		found := false
		for _, d := range dates {
			found = found || d == want
		}
		if !found {
			t.Fatalf("unmapped_dates %v lack %s", dates, want)
		}
	}
	if !sort.SliceIsSorted(dates, func(i, j int) bool { return dates[i].(string) < dates[j].(string) }) {
		t.Fatalf("unmapped_dates not sorted: %v", dates)
	}
	seen := map[string]bool{}
	for _, d := range empty["diagnostics"].([]any) {
		dm := d.(map[string]any)
		if dm["code"] == "unmapped_date" {
			if dm["index"].(float64) != -1 || dm["concept_id"] == "" {
				t.Fatalf("bad unmapped diagnostic %v", dm)
			}
			seen[dm["concept_id"].(string)+" "+dm["message"].(string)] = true
		}
	}
	for _, want := range c.diagnostics {
		if !seen[want] {
			t.Fatalf("unmapped diagnostics %v lack %q", seen, want)
		}
	}
	if len(empty["affected_paths"].([]any)) != 0 || len(empty["diff"].([]any)) != 0 {
		t.Fatalf("incomplete preview carries a plan: %v", empty)
	}

	args := temporalArgs(dir, midnightMappings(dates)...)
	prev := h.mustCall(t, "preview_temporal_upgrade", args)
	if prev["status"] != "applicable" || prev["plan_digest"] == nil || prev["result_revision"] == nil {
		t.Fatalf("preview: %v", prev)
	}
	if len(prev["unmapped_dates"].([]any)) != 0 {
		t.Fatalf("unmapped dates left: %v", prev["unmapped_dates"])
	}
	// Every changed line of every diff is a profile field line.
	for _, fd := range prev["diff"].([]any) {
		diff := fd.(map[string]any)["diff"].(string)
		for _, line := range strings.Split(diff, "\n") {
			if (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-")) &&
				!strings.HasPrefix(line, "+++") && !strings.HasPrefix(line, "---") && !profileLineRE.MatchString(line) {
				t.Fatalf("%s: diff changes a non-profile line %q", fd.(map[string]any)["path"], line)
			}
		}
	}
	assertNoWrite(t, orig, dir)

	res := h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
	if res["status"] != "applied" || res["result_revision"] != prev["result_revision"] || res["change_id"] != prev["plan_digest"] {
		t.Fatalf("apply: %v", res)
	}
	if len(res["affected_paths"].([]any)) != len(prev["affected_paths"].([]any)) {
		t.Fatalf("affected paths %v, preview said %v", res["affected_paths"], prev["affected_paths"])
	}

	// Substituting the dates back restores every original byte.
	identical := c.identical
	for _, p := range prev["affected_paths"].([]any) {
		was, err := fs.ReadFile(c.src.fsys, c.date+"/"+p.(string))
		if err != nil {
			t.Fatal(err)
		}
		now, _ := os.ReadFile(filepath.Join(dir, p.(string)))
		if string(was) == string(now) {
			t.Fatalf("%s did not change", p)
		}
		if back := midnightRE.ReplaceAll(now, []byte("$1")); string(back) != string(was) {
			t.Fatalf("%s: changed beyond the date values", p)
		}
		if c.identical == nil {
			identical = append(identical, p.(string))
		}
	}
	if len(identical) < 5 {
		t.Fatalf("only %d files to compare with the instant twin: %v", len(identical), identical)
	}
	// Where the instant fixture differs from the date fixture only in the
	// profile values, the result is byte-identical to it.
	for _, rel := range identical {
		want, err := fs.ReadFile(c.src.fsys, c.instant+"/"+rel)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, rel))
		if string(got) != string(want) {
			t.Fatalf("%s differs from the instant fixture", rel)
		}
	}

	v := h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
	if v["bundle"].(map[string]any)["temporal_profile"] != "instant" || v["conformant"] != true {
		t.Fatalf("validate after upgrade: %v", v)
	}
	l := h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir})
	if l["bundle"].(map[string]any)["temporal_profile"] != "instant" {
		t.Fatalf("list after upgrade: %v", l["bundle"])
	}
	again := h.mustCall(t, "preview_temporal_upgrade", args)
	if again["status"] != "noop" || again["plan_digest"] != nil {
		t.Fatalf("preview after upgrade: %v", again)
	}
}

// TestTemporalEveryFixture upgrades every own date-profile bundle with
// midnight UTC mappings and finds nothing to do in instant bundles.
func TestTemporalEveryFixture(t *testing.T) { checkTemporalEveryFixture(t, ownSource()) }

// TestConformanceTemporalEveryFixture does the same over the spec
// authors' bundles (NOTEBRIDGE_OKF_FIXTURES).
func TestConformanceTemporalEveryFixture(t *testing.T) {
	checkTemporalEveryFixture(t, authorsSource(t))
}

func checkTemporalEveryFixture(t *testing.T, src fixtureSource) {
	h := newHarness(t, Config{})
	upgraded, none := 0, 0
	for _, name := range src.bundles(t) {
		profile, _, _ := strings.Cut(name, "/")
		if profile != "v0.2-date" && profile != "v0.2-instant" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			dir := src.copy(t, name)
			if profile == "v0.2-instant" {
				prev := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir))
				if prev["status"] != "noop" || prev["plan_digest"] != nil {
					t.Fatalf("preview: %v", prev)
				}
				return
			}
			first := h.mustCall(t, "preview_temporal_upgrade", temporalArgs(dir))
			if first["status"] == "noop" {
				// Some date fixtures carry no profile fields at all.
				v := h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
				if v["bundle"].(map[string]any)["temporal_profile"] != "none" {
					t.Fatalf("noop preview on a bundle with profile %v", v["bundle"])
				}
				none++
				return
			}
			args := upgradableArgs(t, h, dir)
			prev := h.mustCall(t, "preview_temporal_upgrade", args)
			if prev["status"] != "applicable" {
				t.Fatalf("preview: %v", prev)
			}
			h.mustCall(t, "apply_temporal_upgrade", temporalApplyArgs(prev, args))
			v := h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
			if v["bundle"].(map[string]any)["temporal_profile"] != "instant" {
				t.Fatalf("validate after upgrade: %v", v["bundle"])
			}
			upgraded++
		})
	}
	// Both date-profile branches ran: an upgrade and a bundle without
	// profile fields.
	if upgraded == 0 || none == 0 {
		t.Fatalf("%d date bundles upgraded, %d without profile fields; want both", upgraded, none)
	}
}
