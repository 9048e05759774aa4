package doc

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

type fixture struct {
	rel  string // slash path from the fixture tree's root
	data []byte
}

// loadFixtures reads every .md file of a fixture tree (read-only).
func loadFixtures(tb testing.TB, fsys fs.FS) []fixture {
	tb.Helper()
	var out []fixture
	for _, f := range okftest.MarkdownFiles(tb, fsys) {
		out = append(out, fixture{rel: f.Rel, data: f.Data})
	}
	return out
}

func isReserved(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	return base == "index.md" || base == "log.md"
}

// The project's own bundles (pkg/testkit/okftest/testdata/okf), always run.

func TestFixturesRoundTrip(t *testing.T) { checkRoundTrip(t, okftest.Own()) }

// TestFixturesV02Warnings: no legacy warnings in v0.2 concepts, and the
// traits the own bundles exist to cover (comma-string tags, [^1] footnotes
// without a matching source id) are really there.
func TestFixturesV02Warnings(t *testing.T) {
	counts := checkV02Warnings(t, okftest.Own())
	for _, c := range []string{"bad_tags", "unknown_footnote"} {
		if counts[c] == 0 {
			t.Errorf("no %s warning over the own v0.2 fixtures: %v", c, counts)
		}
	}
}

func TestFixturesProfiles(t *testing.T) { checkProfiles(t, okftest.Own()) }

func TestFixtureLegacyCitations(t *testing.T) {
	checkLegacyCitations(t, okftest.Own(), "v0.1/fjord_telemetry/references/metrics/rider_count.md",
		[]string{"https://docs.fjord.example/telemetry/riders"}, "2026-02-14T09:18:52+00:00")
}

func TestFixtureLinks(t *testing.T) {
	checkFirstLink(t, okftest.Own(), "v0.1/fjord_telemetry/tables/trips.md", "tables/trips",
		Link{Text: "Trip Count", Target: "../references/metrics/trip_count.md"}, "references/metrics/trip_count")
}

// The spec authors' bundles, run only when NOTEBRIDGE_OKF_FIXTURES names
// them (okftest.Authors skips when unset and fails when unusable).

func TestConformanceRoundTrip(t *testing.T) { checkRoundTrip(t, okftest.Authors(t)) }

// TestConformanceV02Warnings logs the remaining warning counts (the
// date-profile stackoverflow bundle has comma-string tags and [^1]
// footnotes).
func TestConformanceV02Warnings(t *testing.T) {
	t.Logf("warning counts over v0.2 fixtures: %v", checkV02Warnings(t, okftest.Authors(t)))
}

func TestConformanceProfiles(t *testing.T) { checkProfiles(t, okftest.Authors(t)) }

func TestConformanceLegacyCitations(t *testing.T) {
	checkLegacyCitations(t, okftest.Authors(t), "v0.1/ga4/references/metrics/user_count.md",
		[]string{"https://developers.google.com/analytics/bigquery/web-ecommerce-demo-dataset"}, "2026-05-28T22:50:09+00:00")
}

func TestConformanceLinks(t *testing.T) {
	checkFirstLink(t, okftest.Authors(t), "v0.1/ga4/tables/events_.md", "tables/events_",
		Link{Text: "Event Count", Target: "../references/metrics/event_count.md"}, "references/metrics/event_count")
}

func TestConformanceFastPath(t *testing.T) { checkFastPathFixtures(t, okftest.Authors(t)) }

// checkRoundTrip parses every file of the tree: bytes and the
// frontmatter/body split reassemble the input, the frontmatter-only parse
// agrees, and v0.2 concepts have no error problems.
func checkRoundTrip(t *testing.T, fsys fs.FS) {
	for _, f := range loadFixtures(t, fsys) {
		t.Run(f.rel, func(t *testing.T) {
			d, err := Parse(f.data, Limits{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := d.Bytes(); !bytes.Equal(got, f.data) {
				t.Fatalf("Bytes() differs from input")
			}
			if d.HasFrontmatter() {
				re := append(append([]byte("---\n"), d.Frontmatter()...), []byte("---\n")...)
				if !bytes.Equal(append(re, d.Body()...), f.data) {
					t.Fatalf("fences + Frontmatter + Body do not reassemble the input")
				}
			}
			_ = d.Project()
			_ = d.ProfileFields()
			_ = Links(d.Body())
			probs := Check(d)

			fo, err := ParseFrontmatterOnly(bytes.NewReader(f.data), Limits{})
			if err != nil {
				t.Fatalf("ParseFrontmatterOnly: %v", err)
			}
			if !bytes.Equal(fo.Frontmatter(), d.Frontmatter()) || fo.HasFrontmatter() != d.HasFrontmatter() {
				t.Fatalf("ParseFrontmatterOnly frontmatter differs from Parse")
			}
			if !fo.BodyOmitted() || len(fo.Body()) != 0 {
				t.Fatalf("ParseFrontmatterOnly must omit the body")
			}

			if !strings.HasPrefix(f.rel, "v0.2-") || isReserved(f.rel) {
				return
			}
			for _, p := range probs {
				if p.Severity == SeverityError {
					t.Errorf("unexpected error problem: %+v", p)
				}
			}
		})
	}
}

// checkV02Warnings fails on a legacy warning in a v0.2 concept and returns
// the warning counts over the v0.2 concepts.
func checkV02Warnings(t *testing.T, fsys fs.FS) map[string]int {
	counts := map[string]int{}
	for _, f := range loadFixtures(t, fsys) {
		if !strings.HasPrefix(f.rel, "v0.2-") || isReserved(f.rel) {
			continue
		}
		d, err := Parse(f.data, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f.rel, err)
		}
		for _, p := range Check(d) {
			counts[p.Code]++
			if p.Code == "legacy_timestamp" || p.Code == "legacy_citations" {
				t.Errorf("%s: v0.2 fixture reported %s", f.rel, p.Code)
			}
		}
	}
	return counts
}

// checkProfiles: every profile field of a v0.2-date bundle is a date, of
// a v0.2-instant bundle an instant, and both profiles have some.
func checkProfiles(t *testing.T, fsys fs.FS) {
	seen := map[TemporalKind]int{}
	for _, f := range loadFixtures(t, fsys) {
		var want TemporalKind
		switch {
		case strings.HasPrefix(f.rel, "v0.2-date/"):
			want = TemporalDate
		case strings.HasPrefix(f.rel, "v0.2-instant/"):
			want = TemporalInstant
		default:
			continue
		}
		d, err := Parse(f.data, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f.rel, err)
		}
		for _, tf := range d.ProfileFields() {
			seen[tf.Kind]++
			if tf.Kind != want {
				t.Errorf("%s: %s = %q classified %s, want %s", f.rel, tf.Path, tf.Value, tf.Kind, want)
			}
		}
	}
	if seen[TemporalDate] == 0 || seen[TemporalInstant] == 0 {
		t.Errorf("profile fields seen: %v, want dates and instants", seen)
	}
}

// checkLegacyCitations: a v0.1 concept's Citations items and timestamp are
// read, and Check flags both as legacy.
func checkLegacyCitations(t *testing.T, fsys fs.FS, rel string, want []string, timestamp string) {
	data, err := fs.ReadFile(fsys, rel)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := LegacyCitations(d.Body()); !equalStrings(got, want) {
		t.Fatalf("LegacyCitations = %q, want %q", got, want)
	}
	if p := d.Project(); p.LegacyTimestamp != timestamp {
		t.Errorf("LegacyTimestamp = %q, want %q", p.LegacyTimestamp, timestamp)
	}
	codes := problemCodes(Check(d))
	for _, c := range []string{"legacy_timestamp", "legacy_citations"} {
		if !codes[c] {
			t.Errorf("Check missing %s: %v", c, codes)
		}
	}
}

// checkFirstLink: the first body link of rel (concept id) is want, its
// line number points at it in the file, and it resolves to wantID.
func checkFirstLink(t *testing.T, fsys fs.FS, rel, id string, want Link, wantID string) {
	data, err := fs.ReadFile(fsys, rel)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	links := Links(d.Body())
	if len(links) == 0 {
		t.Fatal("no links found")
	}
	first := links[0]
	if first.Text != want.Text || first.Target != want.Target {
		t.Fatalf("first link = %+v, want %+v", first, want)
	}
	if line := d.BodyStartLine() + first.Line - 1; !bytes.HasPrefix(bytes.Split(data, []byte("\n"))[line-1], []byte("- ["+want.Text+"]")) {
		t.Fatalf("link line %d does not point at the link", line)
	}
	got, ok := ResolveConceptTarget(id, first.Target)
	if !ok || got != wantID {
		t.Fatalf("resolve = %q, %v, want %q", got, ok, wantID)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func problemCodes(ps []Problem) map[string]bool {
	m := map[string]bool{}
	for _, p := range ps {
		m[p.Code] = true
	}
	return m
}
