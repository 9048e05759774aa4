package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// NoteScenarios covers listing, relations, update, trash and restore of
// notes, and the trash listing.
func NoteScenarios(t *testing.T, env Env) {
	t.Run("list_notes", func(t *testing.T) { listNotes(t, env) })
	t.Run("relations", func(t *testing.T) { noteRelations(t, env) })
	t.Run("update_note", func(t *testing.T) { updateNote(t, env) })
	t.Run("trash_and_restore", func(t *testing.T) { trashAndRestoreNote(t, env) })
}

func createNote(t *testing.T, env Env, notebook, title, body string) note {
	t.Helper()
	var n note
	mustCall(t, env, "create_note", map[string]any{"notebook_id": notebook, "title": title, "body": body}, &n)
	return n
}

type noteList struct {
	Notes   []note `json:"notes"`
	Page    int    `json:"page"`
	HasMore bool   `json:"has_more"`
}

func ids(notes []note) map[string]bool {
	out := map[string]bool{}
	for _, n := range notes {
		out[n.ID] = true
	}
	return out
}

func listNotes(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Listing"), "")
	var created []note
	for _, title := range []string{"alpha", "bravo", "charlie"} {
		created = append(created, createNote(t, env, nb, title, "body of "+title))
	}
	var l noteList
	mustCall(t, env, "list_notes", map[string]any{"notebook_id": nb, "order_by": "title", "order_dir": "asc", "limit": 2}, &l)
	if len(l.Notes) != 2 || l.Notes[0].Title != "alpha" || l.Notes[1].Title != "bravo" || !l.HasMore || l.Notes[0].Body != nil {
		t.Fatalf("page 1: %+v", l)
	}
	mustCall(t, env, "list_notes", map[string]any{"notebook_id": nb, "order_by": "title", "order_dir": "asc", "limit": 2, "page": 2, "include_body": true}, &l)
	if len(l.Notes) != 1 || l.Notes[0].Title != "charlie" || l.HasMore || l.Notes[0].Body == nil || *l.Notes[0].Body != "body of charlie" {
		t.Fatalf("page 2: %+v", l)
	}
	// Trashed notes appear only when asked.
	if err := env.Joplin.Write(context.Background(), "DELETE", "/notes/"+created[0].ID, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	mustCall(t, env, "list_notes", map[string]any{"notebook_id": nb}, &l)
	if len(l.Notes) != 2 || ids(l.Notes)[created[0].ID] {
		t.Fatalf("trashed note listed: %+v", l)
	}
	mustCall(t, env, "list_notes", map[string]any{"notebook_id": nb, "include_trashed": true}, &l)
	if len(l.Notes) != 3 || !ids(l.Notes)[created[0].ID] {
		t.Fatalf("include_trashed: %+v", l)
	}
	// Tag filter.
	var tg struct {
		ID string `json:"id"`
	}
	mustCall(t, env, "create_tag", map[string]any{"title": unique(t, "listing tag")}, &tg)
	mustCall(t, env, "tag_note", map[string]any{"note_id": created[1].ID, "tag_id": tg.ID}, nil)
	mustCall(t, env, "list_notes", map[string]any{"tag_id": tg.ID}, &l)
	if len(l.Notes) != 1 || l.Notes[0].ID != created[1].ID {
		t.Fatalf("tag filter: %+v", l)
	}
	// Unfiltered listing pages through Joplin.
	mustCall(t, env, "list_notes", map[string]any{"limit": 1}, &l)
	if len(l.Notes) != 1 {
		t.Fatalf("unfiltered: %+v", l)
	}
	wantErr(t, env, "list_notes", map[string]any{"notebook_id": nb, "tag_id": tg.ID}, domainerr.InvalidArgument)
	wantErr(t, env, "list_notes", map[string]any{"notebook_id": joplin.NewID()}, domainerr.NotFound)
	wantErr(t, env, "list_notes", map[string]any{"tag_id": joplin.NewID()}, domainerr.NotFound)
	wantErr(t, env, "list_notes", map[string]any{"tag_id": joplin.NewID(), "include_trashed": true}, domainerr.NotFound)
	wantErr(t, env, "list_notes", map[string]any{"resource_id": joplin.NewID()}, domainerr.NotFound)
}

type relNote struct {
	note
	Tags      []struct{ ID string } `json:"tags"`
	Links     []note                `json:"links"`
	Backlinks []note                `json:"backlinks"`
}

func noteRelations(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Graph"), "")
	target := createNote(t, env, nb, "target", "I am linked to")
	source := createNote(t, env, nb, "source", "see [target](:/"+target.ID+") and [gone](:/"+joplin.NewID()+")")
	var tg struct {
		ID string `json:"id"`
	}
	mustCall(t, env, "create_tag", map[string]any{"title": unique(t, "graph tag")}, &tg)
	mustCall(t, env, "tag_note", map[string]any{"note_id": source.ID, "tag_id": tg.ID}, nil)

	var got relNote
	mustCall(t, env, "get_note", map[string]any{"id": source.ID, "include": []string{"tags", "links", "resources"}}, &got)
	if len(got.Tags) != 1 || got.Tags[0].ID != tg.ID || len(got.Links) != 1 || got.Links[0].ID != target.ID {
		t.Fatalf("outbound relations: %+v", got)
	}
	mustCall(t, env, "get_note", map[string]any{"id": target.ID, "include": []string{"backlinks"}}, &got)
	if len(got.Backlinks) != 1 || got.Backlinks[0].ID != source.ID || got.Backlinks[0].NotebookID != nb {
		t.Fatalf("backlinks: %+v", got)
	}
	var plain relNote
	mustCall(t, env, "get_note", map[string]any{"id": target.ID}, &plain)
	if plain.Backlinks != nil || plain.Tags != nil || plain.Links != nil {
		t.Fatalf("relations returned without being asked: %+v", plain)
	}
}

func updateNote(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Edit"), "")
	other := Folder(t, env, unique(t, "Edit target"), "")
	n := createNote(t, env, nb, "draft", "v1")
	type updated struct {
		ID          string   `json:"id"`
		UpdatedTime int64    `json:"updated_time"`
		Changed     []string `json:"changed"`
		InTrash     bool     `json:"in_trash"`
		Note        *note    `json:"note"`
	}
	var got updated
	// The result says what changed, without echoing the body back.
	mustCall(t, env, "update_note", map[string]any{"id": n.ID, "title": "final", "body": "v2"}, &got)
	if got.ID != n.ID || got.UpdatedTime == 0 || strings.Join(got.Changed, ",") != "title,body" || got.Note != nil {
		t.Fatalf("update: %+v", got)
	}
	var read note
	mustCall(t, env, "get_note", map[string]any{"id": n.ID}, &read)
	if read.Title != "final" || read.Body == nil || *read.Body != "v2" || read.NotebookID != nb {
		t.Fatalf("after update: %+v", read)
	}
	// Every given field is written, one Joplin write, no read before it.
	got.Changed = nil
	mustCall(t, env, "update_note", map[string]any{"id": n.ID, "title": "final", "body": "v3"}, &got)
	if strings.Join(got.Changed, ",") != "title,body" || got.InTrash {
		t.Fatalf("partly unchanged update: %+v", got)
	}
	mustCall(t, env, "update_note", map[string]any{"id": n.ID, "notebook_id": other, "return_note": true}, &got)
	if strings.Join(got.Changed, ",") != "notebook_id" || got.Note == nil || got.Note.NotebookID != other ||
		got.Note.Title != "final" || got.Note.Body == nil || *got.Note.Body != "v3" {
		t.Fatalf("move with return_note: %+v", got)
	}
	var todo struct {
		Note struct {
			IsTodo  bool  `json:"is_todo"`
			TodoDue int64 `json:"todo_due"`
		} `json:"note"`
	}
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()
	mustCall(t, env, "update_note", map[string]any{"id": n.ID, "is_todo": true, "todo_due": due, "return_note": true}, &todo)
	if !todo.Note.IsTodo || todo.Note.TodoDue != due {
		t.Fatalf("to-do fields: %+v", todo)
	}
	wantErr(t, env, "update_note", map[string]any{"id": n.ID}, domainerr.InvalidArgument)
	wantErr(t, env, "update_note", map[string]any{"id": joplin.NewID(), "title": "x"}, domainerr.NotFound)
	wantErr(t, env, "update_note", map[string]any{"id": n.ID, "notebook_id": joplin.NewID()}, domainerr.NotFound)
	gone := Folder(t, env, unique(t, "Edit gone"), "")
	if err := env.Joplin.Write(context.Background(), "DELETE", "/folders/"+gone, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	wantErr(t, env, "update_note", map[string]any{"id": n.ID, "notebook_id": gone}, domainerr.InvalidArgument)
	// A note in the trash is changed there, stays there, and the result
	// says so.
	mustCall(t, env, "trash_note", map[string]any{"id": n.ID}, nil)
	got = updated{}
	mustCall(t, env, "update_note", map[string]any{"id": n.ID, "title": "edited in the trash"}, &got)
	if !got.InTrash || strings.Join(got.Changed, ",") != "title" {
		t.Fatalf("trashed note update: %+v", got)
	}
	mustCall(t, env, "get_note", map[string]any{"id": n.ID}, &read)
	if read.Title != "edited in the trash" || !read.Trashed || !inTrash(t, env, n.ID) {
		t.Fatalf("trashed note after update: %+v", read)
	}
}

type trashList struct {
	Items []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"items"`
	Total int `json:"total"`
}

func inTrash(t *testing.T, env Env, id string) bool {
	t.Helper()
	var l trashList
	mustCall(t, env, "list_trash", map[string]any{"limit": 100}, &l)
	for page := 2; ; page++ {
		for _, it := range l.Items {
			if it.ID == id {
				return true
			}
		}
		if len(l.Items) < 100 {
			return false
		}
		mustCall(t, env, "list_trash", map[string]any{"limit": 100, "page": page}, &l)
	}
}

func trashAndRestoreNote(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Bin"), "")
	n := createNote(t, env, nb, "disposable", "x")
	var tr struct {
		Trashed, AlreadyTrashed bool
	}
	mustCall(t, env, "trash_note", map[string]any{"id": n.ID}, &tr)
	var got note
	mustCall(t, env, "get_note", map[string]any{"id": n.ID}, &got)
	if !got.Trashed || !inTrash(t, env, n.ID) {
		t.Fatalf("not trashed: %+v", got)
	}
	var again struct {
		AlreadyTrashed bool `json:"already_trashed"`
	}
	mustCall(t, env, "trash_note", map[string]any{"id": n.ID}, &again)
	if !again.AlreadyTrashed {
		t.Fatal("second trash wrote again")
	}
	var rs struct {
		NotebookID      string `json:"notebook_id"`
		AlreadyRestored bool   `json:"already_restored"`
		Moved           bool   `json:"moved"`
	}
	mustCall(t, env, "restore_note", map[string]any{"id": n.ID}, &rs)
	mustCall(t, env, "get_note", map[string]any{"id": n.ID}, &got)
	if got.Trashed || rs.NotebookID != nb || rs.Moved || inTrash(t, env, n.ID) {
		t.Fatalf("restore: %+v %+v", rs, got)
	}
	mustCall(t, env, "restore_note", map[string]any{"id": n.ID}, &rs)
	if !rs.AlreadyRestored {
		t.Fatal("restoring a live note wrote")
	}
	// A note whose notebook is trashed: refused, or restored elsewhere.
	mustCall(t, env, "trash_note", map[string]any{"id": n.ID}, nil)
	if err := env.Joplin.Write(context.Background(), "DELETE", "/folders/"+nb, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !inTrash(t, env, nb) {
		t.Fatal("trashed notebook not listed in the trash")
	}
	e := wantErr(t, env, "restore_note", map[string]any{"id": n.ID}, domainerr.InvalidArgument)
	if e.Details["restore_tool"] != "restore_notebook" {
		t.Fatalf("restore into trashed notebook: %+v", e)
	}
	elsewhere := Folder(t, env, unique(t, "Rescue"), "")
	mustCall(t, env, "restore_note", map[string]any{"id": n.ID, "notebook_id": elsewhere}, &rs)
	mustCall(t, env, "get_note", map[string]any{"id": n.ID}, &got)
	if !rs.Moved || got.NotebookID != elsewhere || got.Trashed {
		t.Fatalf("restore elsewhere: %+v %+v", rs, got)
	}
	wantErr(t, env, "trash_note", map[string]any{"id": joplin.NewID()}, domainerr.NotFound)
	wantErr(t, env, "restore_note", map[string]any{"id": joplin.NewID()}, domainerr.NotFound)
}
