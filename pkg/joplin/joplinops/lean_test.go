package joplinops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// TestNotesCarryNoZeroFields (issue 35): a note in list_notes and get_note
// names its to-do fields and trashed only when set, so a page of plain
// notes is not padded with zeros (65 bytes a note); a to-do keeps them.
func TestNotesCarryNoZeroFields(t *testing.T) {
	h := newHarness(t)
	nb := scenarios.Folder(t, h.env, "Plain", "")
	plain := seedNote(t, h, nb, "plain")
	var todo struct{ ID string }
	if err := h.env.Joplin.Write(context.Background(), "POST", "/notes", nil, map[string]any{"title": "todo", "parent_id": nb, "is_todo": 1, "todo_due": 1764633600000}, &todo); err != nil {
		t.Fatal(err)
	}
	list, derr := h.env.Call(context.Background(), "list_notes", map[string]any{"notebook_id": nb})
	if derr != nil {
		t.Fatal(derr)
	}
	read, derr := h.env.Call(context.Background(), "get_note", map[string]any{"id": plain})
	if derr != nil {
		t.Fatal(derr)
	}
	for _, zero := range []string{`"is_todo":false`, `"todo_due":0`, `"todo_completed":0`, `"trashed":false`} {
		if strings.Contains(string(read), zero) || strings.Count(string(list), zero) > 0 {
			t.Errorf("%s in an answer:\nlist_notes %s\nget_note %s", zero, list, read)
		}
	}
	if !strings.Contains(string(list), `"is_todo":true,"todo_due":1764633600000`) {
		t.Errorf("the to-do lost its fields: %s", list)
	}
}
