package doc

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixturesRoot = "/work/shared/fixtures/okf"

type fixture struct {
	rel  string // path relative to fixturesRoot
	data []byte
}

// loadFixtures reads every .md file under the shared fixtures (read-only).
func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	if _, err := os.Stat(fixturesRoot); err != nil {
		t.Skipf("fixtures not available: %v", err)
	}
	var out []fixture
	err := filepath.WalkDir(fixturesRoot, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixturesRoot, p)
		out = append(out, fixture{rel: filepath.ToSlash(rel), data: data})
		return nil
	})
	if err != nil {
		t.Fatalf("walk fixtures: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("no fixtures found")
	}
	return out
}

func isReserved(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	return base == "index.md" || base == "log.md"
}

func TestFixturesRoundTrip(t *testing.T) {
	for _, f := range loadFixtures(t) {
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

// TestFixturesV02Warnings checks that v0.2 fixture concepts carry no legacy
// warnings and logs the remaining warning counts (the date-profile
// stackoverflow fixtures have comma-string tags and [^1] footnotes).
func TestFixturesV02Warnings(t *testing.T) {
	counts := map[string]int{}
	for _, f := range loadFixtures(t) {
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
	t.Logf("warning counts over v0.2 fixtures: %v", counts)
}

func TestFixturesProfiles(t *testing.T) {
	for _, f := range loadFixtures(t) {
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
			if tf.Kind != want {
				t.Errorf("%s: %s = %q classified %s, want %s", f.rel, tf.Path, tf.Value, tf.Kind, want)
			}
		}
	}
}

func TestFixtureLegacyCitations(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixturesRoot, "v0.1/ga4/references/metrics/user_count.md"))
	if err != nil {
		t.Skipf("fixture not available: %v", err)
	}
	d, err := Parse(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := LegacyCitations(d.Body())
	want := []string{"https://developers.google.com/analytics/bigquery/web-ecommerce-demo-dataset"}
	if !equalStrings(got, want) {
		t.Fatalf("LegacyCitations = %q, want %q", got, want)
	}
	p := d.Project()
	if p.LegacyTimestamp != "2026-05-28T22:50:09+00:00" {
		t.Errorf("LegacyTimestamp = %q", p.LegacyTimestamp)
	}
	codes := problemCodes(Check(d))
	for _, c := range []string{"legacy_timestamp", "legacy_citations"} {
		if !codes[c] {
			t.Errorf("Check missing %s: %v", c, codes)
		}
	}
}

func TestFixtureLinks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixturesRoot, "v0.1/ga4/tables/events_.md"))
	if err != nil {
		t.Skipf("fixture not available: %v", err)
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
	if first.Text != "Event Count" || first.Target != "../references/metrics/event_count.md" {
		t.Fatalf("first link = %+v", first)
	}
	if line := d.BodyStartLine() + first.Line - 1; !bytes.HasPrefix(bytes.Split(data, []byte("\n"))[line-1], []byte("- [Event Count]")) {
		t.Fatalf("link line %d does not point at the link", line)
	}
	id, ok := ResolveConceptTarget("tables/events_", first.Target)
	if !ok || id != "references/metrics/event_count" {
		t.Fatalf("resolve = %q, %v", id, ok)
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
