package joplinops_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestScopedWritesStayInTheWriteScope: a caller reading Work and writing
// Work/Inbox creates and moves only inside Work/Inbox, and can neither
// change Work's notes nor move a note out.
func TestScopedWritesStayInTheWriteScope(t *testing.T) {
	h := newScopedHarness(t)
	checkWriteRules(t, h, seedWorld(t, h))
}

// checkWriteRules is TestScopedWritesStayInTheWriteScope on h holding w.
func checkWriteRules(t *testing.T, h *scopedHarness, w world) {
	who := h.callers(t, scopeOfWorld)[0]
	id := w.ids
	for _, c := range []struct {
		op   string
		args map[string]any
		want domainerr.Code // "" for success
	}{
		{"create_note", map[string]any{"notebook_id": id["$inbox"], "title": "Fine"}, ""},
		{"create_note", map[string]any{"notebook_id": id["$work"], "title": "Read only"}, domainerr.NotebookNotWritable},
		{"create_notebook", map[string]any{"title": "Top level"}, domainerr.NotebookNotWritable},
		{"create_notebook", map[string]any{"title": "Sub", "parent_id": id["$inbox"]}, ""},
		{"update_note", map[string]any{"id": id["$in"], "title": "Changed"}, domainerr.NotebookNotWritable},
		{"update_note", map[string]any{"id": id["$inboxNote"], "notebook_id": id["$work"]}, domainerr.NotebookNotWritable},
		{"update_note", map[string]any{"id": id["$inboxNote"], "title": "Renamed"}, ""},
		{"update_notebook", map[string]any{"id": id["$inbox"], "parent_id": id["$private"]}, domainerr.NotFound},
		{"trash_note", map[string]any{"id": id["$in"]}, domainerr.NotebookNotWritable},
		{"update_tag", map[string]any{"id": id["$sharedTag"], "title": "renamed"}, domainerr.NotebookNotWritable},
		{"delete_tag", map[string]any{"id": id["$sharedTag"]}, domainerr.NotebookNotWritable},
		{"delete_resource", map[string]any{"id": id["$inRes"]}, domainerr.NotebookNotWritable},
		{"tag_note", map[string]any{"note_id": id["$inboxNote"], "tag_id": id["$sharedTag"]}, ""},
		{"trash_note", map[string]any{"id": id["$inboxNote"]}, ""},
		{"restore_note", map[string]any{"id": id["$inboxNote"]}, ""},
	} {
		_, derr := who.call(c.op, c.args)
		got := domainerr.Code("")
		if derr != nil {
			got = derr.Code
		}
		if got != c.want {
			t.Errorf("%s %v: got %v, want %q", c.op, c.args, derr, c.want)
		}
	}
	// The sub-notebook created inside Work/Inbox is in the scope at once.
	var nbs struct {
		Notebooks []struct {
			Title    string `json:"title"`
			Children []struct {
				Title    string `json:"title"`
				Children []struct {
					Title string `json:"title"`
				} `json:"children"`
			} `json:"children"`
		} `json:"notebooks"`
	}
	res, derr := who.call("list_notebooks", nil)
	if derr != nil {
		t.Fatal(derr)
	}
	json.Unmarshal(res, &nbs)
	if len(nbs.Notebooks) != 1 || nbs.Notebooks[0].Title != "Work" || len(nbs.Notebooks[0].Children) != 1 ||
		len(nbs.Notebooks[0].Children[0].Children) != 1 || nbs.Notebooks[0].Children[0].Children[0].Title != "Sub" {
		t.Fatalf("scoped tree: %s", res)
	}
}

// TestScopedCreateOfAnInvisibleTagReusesIt: the tag "secret-tag" exists
// only on outside notes. A limited caller's create answers as a fresh
// create (no TAG_ALREADY_EXISTS naming it, the title as given, not as
// stored) and Joplin keeps one tag with
// that title; tagging a visible note with it reveals none of its others.
func TestScopedCreateOfAnInvisibleTagReusesIt(t *testing.T) {
	h := newScopedHarness(t)
	w := seedWorld(t, h)
	who := h.callers(t, scopeOfWorld)[0]
	res, derr := who.call("create_tag", map[string]any{"title": "Secret-Tag"})
	if derr != nil {
		t.Fatalf("create: %v", derr)
	}
	var tag struct{ ID, Title string }
	json.Unmarshal(res, &tag)
	if tag.ID != w.ids["$secretTag"] || tag.Title != "Secret-Tag" {
		t.Fatalf("create answered %s", res)
	}
	var tags struct {
		Tags []struct{ ID string } `json:"tags"`
	}
	h.owner(t, "list_tags", nil, &tags)
	if n := len(tags.Tags); n != 2 {
		t.Fatalf("Joplin holds %d tags, want 2 (the create reused the tag)", n)
	}
	if _, derr := who.call("tag_note", map[string]any{"note_id": w.ids["$inboxNote"], "tag_id": tag.ID}); derr != nil {
		t.Fatal(derr)
	}
	res, derr = who.call("list_notes", map[string]any{"tag_id": tag.ID})
	if derr != nil || strings.Contains(string(res), w.ids["$out"]) || !strings.Contains(string(res), w.ids["$inboxNote"]) {
		t.Fatalf("notes of the reused tag: %s %v", res, derr)
	}
}

// TestScopedSearchAndStatus: the index answers a limited caller only from
// its notebooks (snippets included), and joplin_status names them and
// counts only their notes.
func TestScopedSearchAndStatus(t *testing.T) {
	h := newScopedHarness(t)
	h.buildIndex(t)
	w := seedWorld(t, h)
	who := h.callers(t, scopeOfWorld)[1]
	res, derr := who.call("search", map[string]any{"query": "lemon", "include_trashed": true})
	if derr != nil {
		t.Fatal(derr)
	}
	var found struct {
		Items []struct{ ID string } `json:"results"`
		Index string                `json:"index"`
	}
	json.Unmarshal(res, &found)
	var ids []string
	for _, it := range found.Items {
		ids = append(ids, it.ID)
	}
	slices.Sort(ids)
	want := []string{w.ids["$in"], w.ids["$inboxNote"]}
	slices.Sort(want)
	if found.Index != "ready" || !slices.Equal(ids, want) {
		t.Fatalf("scoped search: %s", res)
	}
	res, derr = who.call("joplin_status", nil)
	if derr != nil {
		t.Fatal(derr)
	}
	var st struct {
		Notebooks struct {
			All         bool
			Read, Write []string
		} `json:"notebooks"`
		Index struct{ Notes int } `json:"index"`
	}
	json.Unmarshal(res, &st)
	if st.Notebooks.All || !slices.Equal(st.Notebooks.Read, []string{"Work"}) || !slices.Equal(st.Notebooks.Write, []string{"Work/Inbox"}) ||
		st.Index.Notes != 2 {
		t.Fatalf("scoped status: %s", res)
	}
}

// TestNarrowedScopeTakesEffectOnTheNextCall: the scope is the call's
// principal's, resolved per call: a narrower principal sees less at once,
// and an empty one sees nothing.
func TestNarrowedScopeTakesEffectOnTheNextCall(t *testing.T) {
	h := newScopedHarness(t)
	w := seedWorld(t, h)
	count := func(sc notebookscope.Scope) int {
		res, derr := h.callers(t, sc)[1].call("list_notes", nil)
		if derr != nil {
			t.Fatal(derr)
		}
		var out struct{ Notes []any }
		json.Unmarshal(res, &out)
		return len(out.Notes)
	}
	wide := notebookscope.New(notebookscope.Only("Work"), notebookscope.Only("Work"))
	narrow := notebookscope.New(notebookscope.Only(w.ids["$inbox"]), notebookscope.Only(w.ids["$inbox"]))
	if a, b, c := count(wide), count(narrow), count(notebookscope.Scope{}); a != 2 || b != 1 || c != 0 {
		t.Fatalf("notes seen: wide %d, narrow %d, none %d", a, b, c)
	}
}

// TestScopedSearchByMeaning: semantic and hybrid searches of a limited
// caller rank and quote only its notebooks' notes.
func TestScopedSearchByMeaning(t *testing.T) {
	p := embedtest.New()
	defer p.Close()
	provider, err := embed.New(embed.Config{BaseURL: p.BaseURL(), Model: "concepts"})
	if err != nil {
		t.Fatal(err)
	}
	_, url, tf := joplinfake.Serve(t, token)
	h := newScopedMeaningHarness(t, url, tf, joplinindex.MeaningConfig{Provider: provider})
	work := h.ownerID(t, "create_notebook", map[string]any{"title": "Work"})
	private := h.ownerID(t, "create_notebook", map[string]any{"title": "Private"})
	h.ownerID(t, "create_note", map[string]any{"notebook_id": work, "title": "GP appointment", "body": "checkup at the clinic"})
	secret := h.ownerID(t, "create_note", map[string]any{"notebook_id": private, "title": "Secret clinic visit", "body": "secretbody checkup at the clinic"})
	h.x.Start()
	waitSignal(t, h.built, "meaning ready")
	who := h.callers(t, notebookscope.New(notebookscope.Only("Work"), notebookscope.Only("Work")))[0]
	for _, mode := range []string{"semantic", "hybrid"} {
		res, derr := who.call("search", map[string]any{"query": "physician visit", "mode": mode})
		if derr != nil {
			t.Fatal(derr)
		}
		if s := string(res); !strings.Contains(s, "GP appointment") || strings.Contains(s, secret) || strings.Contains(s, "ecret") {
			t.Errorf("%s search: %s", mode, s)
		}
	}
}

// TestScopedRevisions: a limited caller lists and reads the revisions of
// its notes, and no other note's.
func TestScopedRevisions(t *testing.T) {
	h := newScopedHarness(t)
	w := seedWorld(t, h)
	who := h.callers(t, scopeOfWorld)[0]
	res, derr := who.call("list_note_revisions", map[string]any{"note_id": w.ids["$in"]})
	if derr != nil || !strings.Contains(string(res), w.ids["$inRev"]) || strings.Contains(string(res), w.ids["$outRev"]) {
		t.Fatalf("revisions of a visible note: %s %v", res, derr)
	}
	if _, derr := who.call("get_note_revision", map[string]any{"note_id": w.ids["$in"], "revision_id": w.ids["$inRev"]}); derr != nil {
		t.Fatalf("a visible note's revision: %v", derr)
	}
	if _, derr := who.call("list_note_revisions", map[string]any{"note_id": w.ids["$out"]}); derr == nil || derr.Code != domainerr.NotFound {
		t.Fatalf("revisions of an outside note: %v", derr)
	}
}

// TestScopedApplyDoesNotReplayAnInvisibleReceipt: a limited caller that
// sends the changes and digest of an apply the owner made to an outside
// note gets the answer it gets for a digest no receipt holds, never the
// owner's receipt replayed.
func TestScopedApplyDoesNotReplayAnInvisibleReceipt(t *testing.T) {
	h := newScopedHarness(t)
	w := seedWorld(t, h)
	changes := []map[string]any{{"note": w.ids["$out"], "op": "append", "text": "more secretbody"}}
	for _, who := range h.callers(t, scopeOfWorld) {
		_, replayed := who.call("apply_note_changes", map[string]any{"changes": changes, "plan_digest": w.ids["$outReceipt"]})
		_, missing := who.call("apply_note_changes", map[string]any{"changes": changes, "plan_digest": strings.Repeat("a", 64)})
		if replayed == nil || missing == nil || replayed.Code != missing.Code || replayed.Message != missing.Message {
			t.Errorf("%s: the owner's receipt: %v; no receipt: %v", who.name, replayed, missing)
		}
	}
}
