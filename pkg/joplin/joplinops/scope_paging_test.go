package joplinops_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// onlyW reads and writes the notebook W (by path) and what it holds.
var onlyW = notebookscope.New(notebookscope.Only("W"), notebookscope.Only("W"))

// TestScopedScanPastAPageOfHiddenNotes (issue 31, defect 2, as reported):
// 100 notes in Other ahead of W's notes a, b (linking a) and a trashed c.
// A caller limited to W gets b as a's backlink and c in the trash on every
// surface: the scan goes on past the page the scope emptied.
func TestScopedScanPastAPageOfHiddenNotes(t *testing.T) {
	checkScanPastHiddenPage(t, newScopedHarness(t))
}

// checkScanPastHiddenPage is TestScopedScanPastAPageOfHiddenNotes on h.
func checkScanPastHiddenPage(t *testing.T, h *scopedHarness) {
	other := h.ownerID(t, "create_notebook", map[string]any{"title": "Other"})
	for i := range 100 {
		rawCreate(t, h.c, "notes", map[string]any{"title": fmt.Sprint("other ", i), "parent_id": other}, own)
	}
	w := h.ownerID(t, "create_notebook", map[string]any{"title": "W"})
	a := h.ownerID(t, "create_note", map[string]any{"notebook_id": w, "title": "a"})
	b := h.ownerID(t, "create_note", map[string]any{"notebook_id": w, "title": "b", "body": "see [a](:/" + a + ")"})
	c := h.ownerID(t, "create_note", map[string]any{"notebook_id": w, "title": "c"})
	h.owner(t, "trash_note", map[string]any{"id": c}, nil)
	for _, who := range h.callers(t, onlyW) {
		if got := idsIn(t, who, "get_note", map[string]any{"id": a, "include": []string{"backlinks"}}); !slices.Contains(got, b) {
			t.Errorf("%s: get_note a's backlinks lack b: %v", who.name, got)
		}
		if got := idsIn(t, who, "list_trash", map[string]any{}); !slices.Contains(got, c) {
			t.Errorf("%s: list_trash lacks c: %v", who.name, got)
		}
	}
}

var idPattern = regexp.MustCompile(`[0-9a-f]{32}`)

// idsIn calls op and lists every id its answer holds.
func idsIn(t testing.TB, who caller, op string, args map[string]any) []string {
	t.Helper()
	res, derr := who.call(op, args)
	if derr != nil {
		t.Fatalf("%s over %s: %v %v", op, who.name, derr, derr.Details)
	}
	return idPattern.FindAllString(string(res), -1)
}

// pagedIDs calls a paged op page after page until has_more is false.
func pagedIDs(t testing.TB, who caller, op string, args map[string]any) []string {
	t.Helper()
	var all []string
	for page := 1; ; page++ {
		args["page"] = page
		res, derr := who.call(op, args)
		if derr != nil {
			t.Fatalf("%s page %d over %s: %v", op, page, who.name, derr)
		}
		all = append(all, idPattern.FindAllString(string(res), -1)...)
		var p struct {
			HasMore bool `json:"has_more"`
		}
		json.Unmarshal(res, &p)
		if !p.HasMore {
			return all
		}
	}
}

// hiddenSeeder makes objects a caller limited to W cannot see: notebooks,
// notes in a hidden notebook, tags on hidden notes only, resources linked
// by hidden notes, revisions of hidden notes.
type hiddenSeeder struct {
	h      *scopedHarness
	rnd    *rand.Rand
	nb     string // the hidden notebook of the hidden notes
	notes  []string
	tagged string // a visible tag, once made, also put on hidden notes
}

// hiddenKinds are the kinds of hidden objects.
var hiddenKinds = []string{"folders", "notes", "tags", "resources", "revisions"}

// seed makes n hidden objects of kind.
func (s *hiddenSeeder) seed(t testing.TB, kind string, n int) {
	t.Helper()
	for range n {
		switch {
		case kind == "folders" || s.nb == "":
			s.nb = rawCreate(t, s.h.c, "folders", map[string]any{"title": fmt.Sprint("hidden ", s.rnd.Int())}, own)
			if kind == "folders" {
				continue
			}
		}
		if kind == "notes" || len(s.notes) == 0 {
			s.notes = append(s.notes, rawCreate(t, s.h.c, "notes", map[string]any{"title": "hidden note", "parent_id": s.nb}, own))
			if kind == "notes" {
				continue
			}
		}
		switch kind {
		case "tags":
			tag := rawCreate(t, s.h.c, "tags", map[string]any{"title": fmt.Sprint("hidden tag ", s.rnd.Int())}, own)
			s.link(t, tag)
			if s.tagged != "" {
				s.link(t, s.tagged)
			}
		case "resources":
			name := fmt.Sprint("hidden ", s.rnd.Int())
			s.h.owner(t, "create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString([]byte(name)),
				"filename": name + ".txt", "note_id": s.notes[s.rnd.IntN(len(s.notes))]}, nil)
		case "revisions":
			plantRevision(t, s.h, s.notes[s.rnd.IntN(len(s.notes))])
		}
	}
}

// split draws, for every kind, 0 to 300 hidden objects and places them
// before, between and after the visible ones.
func split(rnd *rand.Rand) (counts [3]map[string]int) {
	for i := range counts {
		counts[i] = map[string]int{}
	}
	for _, k := range hiddenKinds {
		n := rnd.IntN(301)
		if rnd.IntN(3) == 0 {
			n = 150 + rnd.IntN(151) // often more than a page
		}
		before := rnd.IntN(n + 1)
		between := rnd.IntN(n - before + 1)
		counts[0][k], counts[1][k], counts[2][k] = before, between, n-before-between
	}
	return counts
}

// seedAll makes the hidden objects counts says, kind by kind.
func (s *hiddenSeeder) seedAll(t testing.TB, counts map[string]int) {
	t.Helper()
	for _, k := range hiddenKinds {
		s.seed(t, k, counts[k])
	}
}

func (s *hiddenSeeder) link(t testing.TB, tag string) {
	t.Helper()
	if err := s.h.c.Write(own, "POST", "/tags/"+tag+"/notes", nil, map[string]any{"id": s.notes[s.rnd.IntN(len(s.notes))]}, nil); err != nil {
		t.Fatal(err)
	}
}

// plantRevision adds a revision of note, as the apps sync them.
func plantRevision(t testing.TB, h *scopedHarness, note string) string {
	t.Helper()
	id := joplin.NewID()
	rev := map[string]any{"id": id, "item_type": 1, "item_id": note, "item_updated_time": 1_700_000_000_000,
		"title_diff": "", "body_diff": "", "metadata_diff": `{"new":{},"deleted":[]}`, "encryption_applied": 0}
	if err := h.c.Write(own, "POST", "/revisions", nil, rev, nil); err != nil {
		t.Fatalf("plant revision: %v", err)
	}
	return id
}

// TestScopedScansAreComplete (issue 31, defect 2): random Joplins with 0 to
// 300 objects a caller limited to W cannot see, of every kind, before,
// between and after W's own. Each scoped answer, on every surface, holds
// exactly the owner's answer filtered by hand to what W holds.
func TestScopedScansAreComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds several Joplins")
	}
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkScopedScans(t, rand.New(rand.NewPCG(seed, 31))) })
	}
}

func checkScopedScans(t *testing.T, rnd *rand.Rand) {
	h := newScopedHarness(t)
	s := &hiddenSeeder{h: h, rnd: rnd}
	counts := split(rnd)
	s.seedAll(t, counts[0])
	w := h.ownerID(t, "create_notebook", map[string]any{"title": "W"})
	a := h.ownerID(t, "create_note", map[string]any{"notebook_id": w, "title": "a"})
	tag := h.ownerID(t, "create_tag", map[string]any{"title": "visible"})
	s.tagged = tag
	s.seedAll(t, counts[1])
	sub := h.ownerID(t, "create_notebook", map[string]any{"title": "Sub", "parent_id": w})
	res := h.ownerID(t, "create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString([]byte("visible")), "filename": "v.txt"})
	b := h.ownerID(t, "create_note", map[string]any{"notebook_id": sub, "title": "b", "body": "see [a](:/" + a + ") and [r](:/" + res + ")"})
	h.owner(t, "tag_note", map[string]any{"note_id": b, "tag_id": tag}, nil)
	c := h.ownerID(t, "create_note", map[string]any{"notebook_id": w, "title": "c"})
	h.owner(t, "trash_note", map[string]any{"id": c}, nil)
	rev := plantRevision(t, h, a)
	s.seedAll(t, counts[2])
	visible := []string{w, sub, a, b, c, tag, res, rev}

	calls := []struct {
		op    string
		args  map[string]any
		paged bool
	}{
		{"list_notes", map[string]any{"limit": 100}, true},
		{"list_notes", map[string]any{"limit": 100, "include_trashed": true}, true},
		{"list_notes", map[string]any{"tag_id": tag, "limit": 100}, true},
		{"list_notes", map[string]any{"resource_id": res, "limit": 100}, true},
		{"list_notes", map[string]any{"notebook_id": w, "include_trashed": true, "limit": 100}, true},
		{"list_tags", map[string]any{}, false},
		{"list_notebooks", map[string]any{}, false},
		{"list_trash", map[string]any{"limit": 100}, true},
		{"get_note", map[string]any{"id": a, "include": []string{"backlinks"}}, false},
		{"get_resource", map[string]any{"id": res, "include_notes": true}, false},
		{"list_note_revisions", map[string]any{"note_id": a}, false},
		{"list_resources", map[string]any{"limit": 100}, true},
		// Joplin's own search (the index is not built): titles by LIKE.
		{"search", map[string]any{"query": "*", "type": "tag", "limit": 100}, true},
		{"search", map[string]any{"query": "*", "type": "notebook", "limit": 100}, true},
	}
	ownerCaller := caller{name: "owner", call: func(op string, args map[string]any) (json.RawMessage, *domainerr.Error) {
		return h.ownerCall(op, args)
	}}
	for _, who := range h.callers(t, onlyW) {
		for _, c := range calls {
			if op, _ := h.ex.Registry().Lookup(c.op); !op.ExposedOn(who.t) {
				continue
			}
			ask := func(as caller) []string {
				if c.paged {
					return pagedIDs(t, as, c.op, maps.Clone(c.args))
				}
				return idsIn(t, as, c.op, c.args)
			}
			want := filterIDs(ask(ownerCaller), visible)
			if len(want) == 0 {
				t.Fatalf("%s %v: the owner's answer holds none of W's objects", c.op, c.args)
			}
			got := ask(who)
			if !sameSet(dedupe(got), dedupe(want)) {
				t.Errorf("hidden before %v, between %v, after %v: %s %v over %s answers %v, the owner's answer filtered %v",
					counts[0], counts[1], counts[2], c.op, c.args, who.name, got, want)
			}
		}
	}
}

func filterIDs(ids, keep []string) []string {
	var out []string
	for _, id := range ids {
		if slices.Contains(keep, id) {
			out = append(out, id)
		}
	}
	return out
}

func dedupe(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}
