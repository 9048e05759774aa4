package joplinops_test

import (
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestEditNoteIsTheLeanAgentTask: with the index built, the lean agent
// task (search, get_note, edit_note changing one line and tagging by a new
// title, get_note) costs at most 8 Joplin requests: the search none but
// its catch-up poll of /events (counted apart: the first search after a
// background pass asks Joplin what changed, issue 35); the edit reads the
// note and its tags, looks the title up, creates the tag, writes the note
// and links the tag.
func TestEditNoteIsTheLeanAgentTask(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
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
	var task, polls int
	for _, r := range h.fake.Requests()[before:] {
		t.Logf("%s %s", r.Method, r.Path)
		if r.Method == "GET" && r.Path == "/events" {
			polls++
		} else {
			task++
		}
	}
	if task > 8 || polls > 1 {
		t.Fatalf("the lean agent task cost %d Joplin requests and %d /events polls, want ≤ 8 and ≤ 1", task, polls)
	}
	if after["body"] != "line one\nline 2\n" {
		t.Fatalf("body = %q", after["body"])
	}
	if got, _ := h.search(t, "tag:planning"); got != "Roadmap" {
		t.Errorf("search tag:planning = %q", got)
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
