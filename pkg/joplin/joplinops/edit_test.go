package joplinops_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestEditNoteIsTheLeanAgentTask: with the index built, the lean agent
// task (search, get_note, edit_note changing one line and tagging by a new
// title, get_note) costs 8 Joplin requests, the index's own afterwards
// included (issue 35): the search none but its catch-up poll of /events
// (counted apart); the edit reads the note and its tags, creates the tag
// without a title lookup (the index knows no such tag, and Joplin refuses
// a duplicate), writes the note and links the tag; when /events then
// reports the note, the index reads it once and keeps the tag links it
// indexed from the edit's own writes (the stamp is the one it holds).
func TestEditNoteIsTheLeanAgentTask(t *testing.T) {
	signals := make(chan string, 100)
	// Every search polls /events first, so the last one collects what
	// the task's writes cost the index.
	h := newHarnessWith(t, signals, joplinindex.Config{CatchUp: time.Nanosecond})
	nb := h.call(t, "create_notebook", map[string]any{"title": "Projects"})["id"].(string)
	id := h.call(t, "create_note", map[string]any{"title": "Roadmap", "body": "line one\nline two\n", "notebook_id": nb})["id"].(string)
	h.x.Start()
	for s := range signals {
		if s == "built" {
			break
		}
	}
	before := len(h.fake.Requests())
	h.search(t, "Roadmap")
	read := h.call(t, "get_note", map[string]any{"id": id})
	base := read["updated_time"].(float64)
	res := h.call(t, "edit_note", map[string]any{"id": id, "updated_time": base, "changes": []map[string]any{
		{"op": "replace", "find": "line two", "text": "line 2"},
		{"op": "tag", "target": "Planning", "create": true},
	}})
	if res["status"] != "applied" || res["lines_changed"] != float64(2) || res["updated_time"].(float64) <= base {
		t.Fatalf("edit_note = %v", res)
	}
	after := h.call(t, "get_note", map[string]any{"id": id})
	if got, _ := h.search(t, "tag:planning"); got != "Roadmap" {
		t.Errorf("search tag:planning = %q", got)
	}
	var task []string
	polls := 0
	for _, r := range h.fake.Requests()[before:] {
		if r.Method == "GET" && r.Path == "/events" {
			polls++
		} else {
			task = append(task, r.Method+" "+r.Path)
		}
	}
	want := []string{
		"GET /notes/" + id,                                                                 // get_note
		"GET /notes/" + id, "GET /notes/" + id + "/tags", "POST /tags", "PUT /notes/" + id, // edit_note
		"POST /tags/*/notes",
		"GET /notes/" + id, // get_note
		"GET /notes/" + id, // the index, after /events reported the edit
	}
	for i, r := range task {
		if i == 5 && strings.HasPrefix(r, "POST /tags/") && strings.HasSuffix(r, "/notes") {
			task[i] = "POST /tags/*/notes"
		}
	}
	if !slices.Equal(task, want) || polls != 2 {
		t.Fatalf("the lean agent task cost these Joplin requests and %d /events polls (want 2):\n%s\nwant:\n%s",
			polls, strings.Join(task, "\n"), strings.Join(want, "\n"))
	}
	if after["body"] != "line one\nline 2\n" {
		t.Fatalf("body = %q", after["body"])
	}

	// The same call again replays its receipt and writes nothing.
	n := len(h.fake.Requests())
	again := h.call(t, "edit_note", map[string]any{"id": id, "updated_time": base, "changes": []map[string]any{
		{"op": "replace", "find": "line two", "text": "line 2"},
		{"op": "tag", "target": "Planning", "create": true},
	}})
	if again["status"] != "replayed" || again["receipt_id"] != res["receipt_id"] || len(h.fake.Requests()) != n {
		t.Fatalf("retry = %v, %d requests", again, len(h.fake.Requests())-n)
	}

	// The old updated_time no longer matches: PLAN_MISMATCH naming the note.
	_, derr := h.try("edit_note", map[string]any{"id": id, "updated_time": base, "changes": []map[string]any{{"op": "append", "text": "more"}}})
	if derr == nil || derr.Code != domainerr.PlanMismatch {
		t.Fatalf("stale edit: %v", derr)
	}
	if moved, _ := derr.Details["moved"].([]string); len(moved) != 1 || moved[0] != id {
		t.Fatalf("moved = %v", derr.Details["moved"])
	}

	// The tag now exists: a title without create uses it; an unknown one
	// without create is refused.
	cur := h.call(t, "get_note", map[string]any{"id": id})["updated_time"]
	_, derr = h.try("edit_note", map[string]any{"id": id, "updated_time": cur, "changes": []map[string]any{{"op": "tag", "target": "nowhere"}}})
	if derr == nil || derr.Code != domainerr.InvalidArgument {
		t.Fatalf("unknown title without create: %v", derr)
	}
	if res := h.call(t, "edit_note", map[string]any{"id": id, "updated_time": cur, "changes": []map[string]any{{"op": "untag", "target": "PLANNING"}}}); res["status"] != "applied" {
		t.Fatalf("untag by title: %v", res)
	}
	if got, _ := h.search(t, "tag:planning"); got != "" {
		t.Errorf("after untag by title: %q", got)
	}

	// Undo restores the first edit's body... but the note changed since
	// (untag): UNDO_CONFLICT, as with any receipt.
	if _, derr := h.try("undo_note_changes", map[string]any{"receipt_id": res["receipt_id"]}); derr == nil || derr.Code != domainerr.UndoConflict {
		t.Fatalf("undo after a later change: %v", derr)
	}
}

// TestTagNoteByTitle: tag_note and untag_note take a tag title; a missing
// one is NOT_FOUND unless create, which makes it once; tag_id and tag
// together, or neither, are refused.
func TestTagNoteByTitle(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	nb := h.call(t, "create_notebook", map[string]any{"title": "Projects"})["id"].(string)
	id := h.call(t, "create_note", map[string]any{"title": "Roadmap", "notebook_id": nb})["id"].(string)
	if _, derr := h.try("tag_note", map[string]any{"note_id": id, "tag": "Planning"}); derr == nil || derr.Code != domainerr.NotFound {
		t.Fatalf("missing title without create: %v", derr)
	}
	made := h.call(t, "tag_note", map[string]any{"note_id": id, "tag": "Planning", "create": true})
	again := h.call(t, "tag_note", map[string]any{"note_id": id, "tag": "planning", "create": true})
	if made["already_tagged"] != false || again["already_tagged"] != true || again["tag_id"] != made["tag_id"] {
		t.Fatalf("tag by title: %v, then %v", made, again)
	}
	if tags := h.call(t, "list_tags", nil)["total"]; tags != float64(1) {
		t.Fatalf("tags after two creates of one title: %v", tags)
	}
	if res := h.call(t, "untag_note", map[string]any{"note_id": id, "tag": "PLANNING"}); res["already_untagged"] != false {
		t.Fatalf("untag by title: %v", res)
	}
	for _, args := range []map[string]any{{"note_id": id}, {"note_id": id, "tag": "planning", "tag_id": made["tag_id"]}} {
		if _, derr := h.try("tag_note", args); derr == nil || derr.Code != domainerr.InvalidArgument {
			t.Errorf("%v: %v", args, derr)
		}
	}
}

// TestATagMadeElsewhereIsReused: a create by title skips the lookup only
// when the index knows no such tag; a tag another app made since the
// index last looked is then the one Joplin refuses to duplicate, and
// edit_note and tag_note link it instead of failing or making a second.
func TestATagMadeElsewhereIsReused(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	nb := h.call(t, "create_notebook", map[string]any{"title": "Projects"})["id"].(string)
	id := h.call(t, "create_note", map[string]any{"title": "Roadmap", "body": "text", "notebook_id": nb})["id"].(string)
	h.x.Start()
	for s := range signals {
		if s == "built" {
			break
		}
	}
	made := map[string]string{}
	for _, title := range []string{"later", "someday"} {
		var tag struct{ ID string }
		if err := h.raw.Write(own, "POST", "/tags", nil, map[string]any{"title": title}, &tag); err != nil {
			t.Fatal(err)
		}
		made[title] = tag.ID
	}
	cur := h.call(t, "get_note", map[string]any{"id": id})["updated_time"]
	if res := h.call(t, "edit_note", map[string]any{"id": id, "updated_time": cur, "changes": []map[string]any{
		{"op": "tag", "target": "Later", "create": true},
	}}); res["status"] != "applied" {
		t.Fatalf("edit_note = %v", res)
	}
	if res := h.call(t, "tag_note", map[string]any{"note_id": id, "tag": "SOMEDAY", "create": true}); res["tag_id"] != made["someday"] {
		t.Fatalf("tag_note = %v, want tag %s", res, made["someday"])
	}
	var tags []struct{ ID, Title string }
	if err := h.raw.Get(own, "/notes/"+id+"/tags", nil, &struct {
		Items *[]struct{ ID, Title string } `json:"items"`
	}{&tags}); err != nil {
		t.Fatal(err)
	}
	all := h.call(t, "list_tags", map[string]any{})["tags"].([]any)
	if len(tags) != 2 || len(all) != 2 {
		t.Fatalf("the note's tags %v and every tag %v: want the two made elsewhere, once each", tags, all)
	}
	for _, tg := range tags {
		if made[tg.Title] != tg.ID {
			t.Errorf("the note has tag %s %q, not the one made elsewhere", tg.ID, tg.Title)
		}
	}
}
