package okfops

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixtureBundles lists, reads, searches, walks and validates every
// own fixture bundle (on a copy) and proves the read tools wrote nothing,
// not even .okf/.
func TestFixtureBundles(t *testing.T) { checkReadTools(t, ownSource()) }

// TestConformanceFixtureBundles does the same over the spec authors'
// bundles (NOTEBRIDGE_OKF_FIXTURES).
func TestConformanceFixtureBundles(t *testing.T) { checkReadTools(t, authorsSource(t)) }

func checkReadTools(t *testing.T, src fixtureSource) {
	h := newHarness(t, Config{})
	for _, name := range src.bundles(t) {
		t.Run(name, func(t *testing.T) {
			dir := src.copy(t, name)
			before := snapshotTree(t, dir)
			ids := conceptIDs(t, dir)

			list := h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 1000})
			if int(list["total"].(float64)) != len(ids) {
				t.Fatalf("list total %v, want %d", list["total"], len(ids))
			}
			for _, c := range list["concepts"].([]any) {
				row := c.(map[string]any)
				if row["parse_error"] != nil || row["type"] == "" {
					t.Errorf("%v: parse_error=%v type=%q", row["id"], row["parse_error"], row["type"])
				}
			}
			v := list["bundle"].(map[string]any)
			wantVersion, wantProfile := "0.2", ""
			switch {
			case strings.HasPrefix(name, "v0.1/"):
				wantVersion = "0.1"
			case strings.HasPrefix(name, "v0.2-date/"):
				wantProfile = "date"
			case strings.HasPrefix(name, "v0.2-instant/"):
				wantProfile = "instant"
			}
			if v["okf_version"] != wantVersion {
				t.Errorf("okf_version %v, want %s", v["okf_version"], wantVersion)
			}
			if wantProfile != "" && v["temporal_profile"] != wantProfile && v["temporal_profile"] != "none" {
				t.Errorf("temporal_profile %v, want %s", v["temporal_profile"], wantProfile)
			}

			for _, id := range ids {
				raw, _ := os.ReadFile(filepath.Join(dir, id+".md"))
				got := h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": id})
				sum := sha256.Sum256(raw)
				if got["sha256"] != hex.EncodeToString(sum[:]) {
					t.Fatalf("%s: sha mismatch", id)
				}
				fm, body := got["frontmatter"].(string), got["body"].(string)
				if !strings.Contains(string(raw), fm) || !strings.HasSuffix(string(raw), body) {
					t.Fatalf("%s: frontmatter/body not byte-exact slices of the file", id)
				}
				if got["projection"].(map[string]any)["type"] == "" {
					t.Fatalf("%s: no type in projection", id)
				}
				h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": id})
			}

			first := list["concepts"].([]any)[0].(map[string]any)
			word := first["id"].(string)
			if i := strings.LastIndexByte(word, '/'); i >= 0 {
				word = word[i+1:]
			}
			s := h.mustCall(t, "search_concepts", map[string]any{"bundle_path": dir, "query": strings.ToUpper(word), "limit": 200})
			found := false
			for _, hit := range s["hits"].([]any) {
				found = found || hit.(map[string]any)["id"] == first["id"]
			}
			if !found {
				t.Errorf("search for %q did not find %v", word, first["id"])
			}

			rep := h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
			if int(rep["concepts"].(float64)) != len(ids) {
				t.Errorf("validate saw %v concepts, want %d", rep["concepts"], len(ids))
			}
			if strings.HasPrefix(name, "v0.2-") && rep["conformant"] != true {
				t.Errorf("v0.2 fixture not conformant: %v", rep["problems"])
			}

			if after := snapshotTree(t, dir); len(after) != len(before) {
				t.Fatalf("read tools changed the tree: %d entries before, %d after", len(before), len(after))
			} else {
				for k, v := range before {
					if after[k] != v {
						t.Fatalf("read tools changed %s", k)
					}
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, ".okf")); !os.IsNotExist(err) {
				t.Fatal("a read tool created .okf/")
			}
		})
	}
}

// TestNeighbors checks links in and sources on known concepts.
func TestNeighbors(t *testing.T) {
	checkNeighbors(t, ownBundle(t, instantBundle), "computations/bookings-quarter", "policies/booking-recognition", "tables/rentals")
}

func TestConformanceNeighbors(t *testing.T) {
	src := authorsSource(t)
	checkNeighbors(t, src.copy(t, "v0.2-instant/acme_retail"), "computations/revenue-ytd", "policies/revenue-recognition", "tables/orders")
}

// checkNeighbors: computation has a source resolving to the existing
// policy, and something links to table.
func checkNeighbors(t *testing.T, dir, computation, policy, table string) {
	h := newHarness(t, Config{})
	got := h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": computation})
	srcs := got["sources"].([]any)
	if len(srcs) == 0 {
		t.Fatal("no sources")
	}
	resolved := false
	for _, s := range srcs {
		m := s.(map[string]any)
		resolved = resolved || (m["concept_id"] == policy && m["exists"] == true)
	}
	if !resolved {
		t.Errorf("%s source not resolved: %v", policy, srcs)
	}
	in := h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": table})
	if len(in["in"].([]any)) == 0 {
		t.Errorf("nothing links to %s: %v", table, in)
	}
}

// TestReadBounds: every bound is explicit and exceeding one is RESOURCE_LIMIT.
func TestReadBounds(t *testing.T) {
	dir := genBundle(t, 30)
	lim := DefaultTestLimits()
	lim.MaxFiles = 10
	h := newHarness(t, Config{Limits: lim})
	_, derr := h.call(t, "list_concepts", map[string]any{"bundle_path": dir})
	wantCode(t, derr, "RESOURCE_LIMIT")

	lim = DefaultTestLimits()
	lim.MaxFileBytes = 100
	h = newHarness(t, Config{Limits: lim})
	_, derr = h.call(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "group000/concept00001"})
	wantCode(t, derr, "RESOURCE_LIMIT")

	lim = DefaultTestLimits()
	lim.MaxFrontmatterBytes = 50
	h = newHarness(t, Config{Limits: lim})
	got := h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "group000/concept00001"})
	if p := got["problems"].([]any); len(p) == 0 || p[0].(map[string]any)["code"] != "frontmatter_too_large" {
		t.Fatalf("oversized frontmatter not reported: %v", p)
	}

	deep := t.TempDir()
	p := deep
	for i := 0; i < 40; i++ {
		p = filepath.Join(p, "d")
	}
	os.MkdirAll(p, 0o755)
	os.WriteFile(filepath.Join(p, "x.md"), []byte("---\ntype: T\n---\n"), 0o644)
	h = newHarness(t, Config{})
	_, derr = h.call(t, "list_concepts", map[string]any{"bundle_path": deep})
	wantCode(t, derr, "RESOURCE_LIMIT")
	_, derr = h.call(t, "search_concepts", map[string]any{"bundle_path": dir, "query": "x", "limit": 100000})
	wantCode(t, derr, "INVALID_ARGUMENT")

	s := h.mustCall(t, "search_concepts", map[string]any{"bundle_path": dir, "query": "concept", "limit": 5})
	if len(s["hits"].([]any)) != 5 || s["truncated"] != true {
		t.Fatalf("hits not bounded: %v", s)
	}
}

// TestNonConformantIsAReport: broken documents are data, not errors.
func TestNonConformantIsAReport(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "no-frontmatter.md"), []byte("# just markdown\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "no-type.md"), []byte("---\ntitle: x\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad-yaml.md"), []byte("---\ntype: [unclosed\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "dup.md"), []byte("---\ntype: A\ntype: B\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ok.md"), []byte("---\ntype: A\nstatus: bogus\n---\n"), 0o644)
	h := newHarness(t, Config{})
	rep := h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
	if rep["conformant"] != false || rep["errors"].(float64) < 4 {
		t.Fatalf("report: %v", rep)
	}
	codes := map[string]bool{}
	for _, p := range rep["problems"].([]any) {
		codes[p.(map[string]any)["code"].(string)] = true
	}
	for _, c := range []string{"missing_frontmatter", "missing_type", "yaml_syntax", "duplicate_key", "bad_status"} {
		if !codes[c] {
			t.Errorf("problem %s not reported (got %v)", c, codes)
		}
	}
	list := h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir})
	if list["total"].(float64) != 5 {
		t.Fatalf("list: %v", list)
	}
	got := h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "bad-yaml"})
	if got["body"] != "---\ntype: [unclosed\n---\n" {
		t.Fatalf("unparseable concept not returned whole: %v", got)
	}
}
