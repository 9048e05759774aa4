package joplinops_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

// TestScopeProperty builds random notebook trees with a note in each
// notebook, picks random read and write scopes (notebooks named by id or
// by path), and checks list_notes, list_notebooks, get_note and
// create_note against a direct computation of what the scope covers: a
// notebook is covered when it or an ancestor is named.
func TestScopeProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds several trees")
	}
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkScopeProperty(t, rand.New(rand.NewPCG(seed, 24))) })
	}
}

func checkScopeProperty(t *testing.T, rnd *rand.Rand) {
	h := newScopedHarness(t)
	n := 3 + rnd.IntN(8)
	ids, parent, path := make([]string, n), map[string]string{}, map[string]string{}
	noteOf := map[string]string{}
	for i := range ids {
		args := map[string]any{"title": fmt.Sprintf("nb%d", i)}
		if i > 0 && rnd.IntN(3) > 0 {
			args["parent_id"] = ids[rnd.IntN(i)]
		}
		ids[i] = h.ownerID(t, "create_notebook", args)
		path[ids[i]] = fmt.Sprintf("nb%d", i)
		if p, ok := args["parent_id"].(string); ok {
			parent[ids[i]], path[ids[i]] = p, path[p]+"/"+path[ids[i]]
		}
		noteOf[ids[i]] = h.ownerID(t, "create_note", map[string]any{"notebook_id": ids[i], "title": fmt.Sprintf("note%d", i)})
	}
	pick := func() ([]string, map[string]bool) {
		var refs []string
		named := map[string]bool{}
		for _, id := range ids {
			if rnd.IntN(4) == 0 {
				named[id] = true
				if rnd.IntN(2) == 0 {
					refs = append(refs, id)
				} else {
					refs = append(refs, path[id])
				}
			}
		}
		return refs, named
	}
	covers := func(named map[string]bool, id string) bool {
		for seen := 0; id != "" && seen <= n; seen++ {
			if named[id] {
				return true
			}
			id = parent[id]
		}
		return false
	}
	readRefs, readNamed := pick()
	writeRefs, writeNamed := pick()
	sc := notebookscope.New(notebookscope.Only(readRefs...), notebookscope.Only(writeRefs...))
	who := h.callers(t, sc)[rnd.IntN(4)]

	var wantNotes, wantNotebooks []string
	for _, id := range ids {
		if covers(readNamed, id) {
			wantNotes, wantNotebooks = append(wantNotes, noteOf[id]), append(wantNotebooks, id)
		}
	}
	res, derr := who.call("list_notes", map[string]any{"limit": 100})
	if derr != nil {
		t.Fatal(derr)
	}
	var notes struct{ Notes []struct{ ID string } }
	json.Unmarshal(res, &notes)
	var gotNotes []string
	for _, n := range notes.Notes {
		gotNotes = append(gotNotes, n.ID)
	}
	if !sameSet(gotNotes, wantNotes) {
		t.Errorf("scope read %v: list_notes %v, want %v", readRefs, gotNotes, wantNotes)
	}
	res, derr = who.call("list_notebooks", nil)
	if derr != nil {
		t.Fatal(derr)
	}
	if got := notebookIDs(res); !sameSet(got, wantNotebooks) {
		t.Errorf("scope read %v: list_notebooks %v, want %v", readRefs, got, wantNotebooks)
	}
	for _, id := range ids {
		_, derr := who.call("get_note", map[string]any{"id": noteOf[id]})
		if visible := covers(readNamed, id); visible != (derr == nil) || !visible && derr.Code != domainerr.NotFound {
			t.Errorf("get_note in %s (visible %v): %v", path[id], visible, derr)
		}
		_, derr = who.call("create_note", map[string]any{"notebook_id": id, "title": "new"})
		writable := covers(readNamed, id) && covers(writeNamed, id)
		if writable != (derr == nil) {
			t.Errorf("create_note in %s (writable %v): %v", path[id], writable, derr)
		}
	}
}

// notebookIDs lists every id in a list_notebooks answer.
func notebookIDs(res json.RawMessage) []string {
	var out []string
	for _, part := range strings.Split(string(res), `"id":"`)[1:] {
		out = append(out, part[:32])
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
