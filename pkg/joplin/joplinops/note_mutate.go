package joplinops

import (
	"context"
	"encoding/json"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// loadNote reads one note (trashed or not) with the given fields.
func (o *Ops) loadNote(ctx context.Context, id, fields string) (joplin.Note, error) {
	n, err := o.c.Note(ctx, id, fields)
	if err != nil {
		return joplin.Note{}, missing(err, "note", id)
	}
	return n, nil
}

// liveNote checks that note id exists and is not in the trash.
func (o *Ops) liveNote(ctx context.Context, id string) error {
	n, err := o.loadNote(ctx, id, "id,deleted_time")
	if err != nil {
		return err
	}
	if n.DeletedTime > 0 {
		return domainerr.New(domainerr.InvalidArgument, "note %s is in the trash; restore it first", id).
			WithDetails(map[string]any{"note_id": id, "restore_tool": "restore_note"})
	}
	return nil
}

// liveNotebook checks that notebook id exists and is not in the trash.
func (o *Ops) liveNotebook(ctx context.Context, id string) error {
	nb, err := o.loadNotebook(ctx, id, "notebook")
	if err != nil {
		return err
	}
	if nb.DeletedTime > 0 {
		return domainerr.New(domainerr.InvalidArgument, "notebook %s is in the trash; restore it first", id).
			WithDetails(map[string]any{"notebook_id": id, "restore_tool": "restore_notebook"})
	}
	return nil
}

type updateNoteIn struct {
	ID            string  `json:"id" schema:"id"`
	Title         *string `json:"title,omitempty" schema:"min=1,max=500"`
	Body          *string `json:"body,omitempty" jsonschema:"Replaces the whole body." schema:"max=@max_body"`
	NotebookID    *string `json:"notebook_id,omitempty" jsonschema:"Moves the note." schema:"id"`
	IsTodo        *bool   `json:"is_todo,omitempty"`
	TodoDue       *int64  `json:"todo_due,omitempty" jsonschema:"Unix ms; 0 = none." schema:"min=0,max=9007199254740992"`
	TodoCompleted *int64  `json:"todo_completed,omitempty" jsonschema:"Unix ms; 0 = none." schema:"min=0,max=9007199254740992"`
	ReturnNote    bool    `json:"return_note,omitempty" jsonschema:"Also return the updated note, body included (one more Joplin read)."`
}

// updateNoteOut is what an agent needs to go on after an update: not an
// echo of the body it just sent, unless it asks for the note.
type updateNoteOut struct {
	ID          string   `json:"id" schema:"id"`
	UpdatedTime int64    `json:"updated_time" schema:"min=0,max=9007199254740992"`
	Changed     []string `json:"changed" schema:"max=@note_fields,enum=@note_field"`
	InTrash     bool     `json:"in_trash"`
	Note        *Note    `json:"note,omitempty"`
}

// noteFieldNames maps the tool's field names to Joplin's, in output order.
var noteFieldNames = []struct{ tool, joplin string }{
	{"title", "title"}, {"body", "body"}, {"notebook_id", "parent_id"},
	{"is_todo", "is_todo"}, {"todo_due", "todo_due"}, {"todo_completed", "todo_completed"},
}

func (o *Ops) updateNote() registry.Operation {
	desc := "Change a note's title, body, notebook (move) or to-do fields; only given fields are written. A note in the trash is changed there (in_trash: true)."
	return registry.Define(o.meta("update_note", "Replace a note's title or body", desc, registry.EffectUpdate), o.doUpdateNote)
}

// requested returns the Joplin properties an update asks for.
func (in updateNoteIn) requested() map[string]any {
	req := map[string]any{}
	if in.Title != nil {
		req["title"] = *in.Title
	}
	if in.Body != nil {
		req["body"] = *in.Body
	}
	if in.NotebookID != nil {
		req["parent_id"] = *in.NotebookID
	}
	if in.IsTodo != nil {
		req["is_todo"] = boolInt(*in.IsTodo)
	}
	if in.TodoDue != nil {
		req["todo_due"] = *in.TodoDue
	}
	if in.TodoCompleted != nil {
		req["todo_completed"] = *in.TodoCompleted
	}
	return req
}

// doUpdateNote costs one Joplin request: the write. Joplin answers a
// missing note with 404 and its answer carries updated_time and
// deleted_time. No read precedes it (issue 14: the agent task's budget):
// nothing in the contract asks for one, so a note in the trash is changed
// there and the result says so, and every given field is written even when
// it already held that value. A move reads the target notebook first (a
// note must not land in a missing or trashed notebook); return_note reads
// the note back.
func (o *Ops) doUpdateNote(ctx context.Context, in updateNoteIn) (updateNoteOut, error) {
	req := in.requested()
	if len(req) == 0 {
		return updateNoteOut{}, domainerr.New(domainerr.InvalidArgument, "give at least one field to change")
	}
	out := updateNoteOut{ID: in.ID, Changed: []string{}}
	for _, f := range noteFieldNames {
		if _, ok := req[f.joplin]; ok {
			out.Changed = append(out.Changed, f.tool)
		}
	}
	if _, moving := req["parent_id"]; moving {
		if err := o.liveNotebook(ctx, *in.NotebookID); err != nil {
			return updateNoteOut{}, err
		}
	}
	var answer json.RawMessage
	if err := o.c.Write(ctx, "PUT", "/notes/"+in.ID, nil, req, &answer); err != nil {
		return updateNoteOut{}, missing(withObjectID(err, in.ID), "note", in.ID)
	}
	var written joplin.Note
	if err := json.Unmarshal(answer, &written); err != nil {
		// What the client says of an answer it cannot decode.
		return updateNoteOut{}, domainerr.New(domainerr.JoplinError, "Joplin returned a response that could not be decoded")
	}
	out.UpdatedTime, out.InTrash = written.UpdatedTime, written.DeletedTime > 0
	if in.ReturnNote {
		n, err := o.loadNote(ctx, in.ID, noteFields)
		if err != nil {
			return updateNoteOut{}, domainerr.New(domainerr.JoplinError, "note %s was updated, but reading it back failed", in.ID).
				WithDetails(map[string]any{"id": in.ID, "updated": true})
		}
		note := toNote(n, true)
		out.Note = &note
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type noteIDIn struct {
	ID string `json:"id" schema:"id"`
}

func (o *Ops) trashNote() registry.Operation {
	return registry.Define(o.meta("trash_note", "Move a note to the trash", "Move a note to the trash; restore_note brings it back.", registry.EffectTrash), func(ctx context.Context, in noteIDIn) (trashOut, error) {
		n, err := o.loadNote(ctx, in.ID, "id,deleted_time")
		if err != nil {
			return trashOut{}, err
		}
		out, err := o.moveToTrash(ctx, in.ID, "/notes/"+in.ID, n.DeletedTime)
		if err == nil && !out.AlreadyTrashed {
		}
		return out, err
	})
}

type restoreNoteIn struct {
	ID         string `json:"id" schema:"id"`
	NotebookID string `json:"notebook_id,omitempty" schema:"id"`
}

type restoreNoteOut struct {
	ID              string `json:"id" schema:"id"`
	NotebookID      string `json:"notebook_id" schema:"id"`
	AlreadyRestored bool   `json:"already_restored"`
	Moved           bool   `json:"moved"`
}

func (o *Ops) restoreNote() registry.Operation {
	desc := "Restore a note from the trash into its notebook, or into notebook_id when that one is trashed or gone."
	return registry.Define(o.meta("restore_note", "Restore a note from the trash", desc, registry.EffectUpdate), o.doRestoreNote)
}

func (o *Ops) doRestoreNote(ctx context.Context, in restoreNoteIn) (restoreNoteOut, error) {
	n, err := o.loadNote(ctx, in.ID, "id,parent_id,deleted_time")
	if err != nil {
		return restoreNoteOut{}, err
	}
	if n.DeletedTime == 0 {
		return restoreNoteOut{ID: in.ID, NotebookID: n.ParentID, AlreadyRestored: true}, nil
	}
	target := n.ParentID
	if in.NotebookID != "" {
		target = in.NotebookID
	}
	if err := o.liveNotebook(ctx, target); err != nil {
		if in.NotebookID == "" {
			// The note's own notebook cannot take it back: say how to proceed.
			if de, ok := domainerr.As(err); ok {
				return restoreNoteOut{}, domainerr.New(de.Code, "the note's notebook %s is in the trash or gone; restore the notebook with restore_notebook, or pass notebook_id", target).
					WithDetails(map[string]any{"notebook_id": target, "restore_tool": "restore_notebook"})
			}
		}
		return restoreNoteOut{}, err
	}
	req := map[string]any{"deleted_time": 0}
	if target != n.ParentID {
		req["parent_id"] = target
	}
	if err := o.c.Write(ctx, "PUT", "/notes/"+in.ID, nil, req, nil); err != nil {
		return restoreNoteOut{}, withObjectID(err, in.ID)
	}
	return restoreNoteOut{ID: in.ID, NotebookID: target, Moved: target != n.ParentID}, nil
}
