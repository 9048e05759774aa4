package joplinops

import (
	"context"
	"reflect"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// Note is a Joplin note as the operations return it.
// The to-do fields and trashed appear only when set: on a page of 100
// plain notes their zeros were 6 KB for the model to read (issue 35).
type Note struct {
	ID            string  `json:"id" schema:"id"`
	ParentID      string  `json:"notebook_id" schema:"id"`
	Title         string  `json:"title" schema:"max=10000"`
	Body          *string `json:"body,omitempty" schema:"max=100000000"`
	IsTodo        bool    `json:"is_todo,omitempty"`
	TodoDue       int64   `json:"todo_due,omitempty" schema:"min=0,max=9007199254740992"`
	TodoCompleted int64   `json:"todo_completed,omitempty" schema:"min=0,max=9007199254740992"`
	CreatedTime   int64   `json:"created_time" schema:"min=0,max=9007199254740992"`
	UpdatedTime   int64   `json:"updated_time" schema:"min=0,max=9007199254740992"`
	Trashed       bool    `json:"trashed,omitempty"`
}

const noteFields = "id,parent_id,title,body,is_todo,todo_due,todo_completed,created_time,updated_time,deleted_time"

// getNoteFields adds what says whether a note is a conflict copy.
const getNoteFields = noteFields + ",is_conflict,conflict_original_id"

// toNote is n as the operations return it.
func toNote(n joplin.Note, withBody bool) Note {
	out := Note{
		ID: n.ID, ParentID: n.ParentID, Title: n.Title, IsTodo: n.IsTodo == 1,
		TodoDue: n.TodoDue, TodoCompleted: n.TodoCompleted,
		CreatedTime: n.CreatedTime, UpdatedTime: n.UpdatedTime, Trashed: n.DeletedTime > 0,
	}
	if withBody {
		body := n.Body
		out.Body = &body
	}
	return out
}

// MaxBodyChars bounds a note body accepted from a caller.
const MaxBodyChars = 1_000_000

type getNoteIn struct {
	ID          string   `json:"id" schema:"id"`
	IncludeBody *bool    `json:"include_body,omitempty" schema:"default=true"`
	View        string   `json:"view,omitempty" jsonschema:"outline: headings with section sizes, no body; section: only the section under heading; full: the whole body however long. Default: the body, cut at 20000 bytes with an outline when longer." schema:"enum=outline|section|full"`
	Heading     string   `json:"heading,omitempty" jsonschema:"For view section: \"## Title\" (that level) or \"Title\" (any level)." schema:"max=500"`
	Include     []string `json:"include,omitempty" jsonschema:"links: notes the body links to; backlinks: notes linking here (scans all notes)." schema:"max=4,enum=tags|resources|links|backlinks"`
}

type noteWithRelations struct {
	Note
	bodyView
	Relations
	conflictInfo
}

// conflictInfo links a note and its conflict copies (sync_status.go).
type conflictInfo struct {
	IsConflict bool `json:"is_conflict,omitempty"`
	// ConflictOf is set on a conflict copy: the note it conflicts with.
	ConflictOf string `json:"conflict_of,omitempty" schema:"max=32"`
	// ConflictCopies are the conflict copies of this note.
	ConflictCopies []string `json:"conflict_copies,omitempty" schema:"max=@max_conflicts,id"`
}

func (o *Ops) getNote() registry.Operation {
	desc := "Read a note by id (trashed included), optionally with its tags, resources, linked notes and backlinks; says when it is, or has, a sync conflict copy. Long bodies: view outline, then view section with a heading."
	return registry.Define(withDef(o.meta("get_note", "Read a note", desc, registry.EffectRead), reflect.TypeFor[NoteRef](), "note_ref"), func(ctx context.Context, in getNoteIn) (noteWithRelations, error) {
		n, err := o.loadNote(ctx, in.ID, getNoteFields)
		if err != nil {
			return noteWithRelations{}, err
		}
		rel, err := o.relations(ctx, n, in.Include)
		if err != nil {
			return noteWithRelations{}, err
		}
		ci := conflictInfo{ConflictCopies: o.copiesOf(ctx, n.ID)}
		if n.IsConflict != 0 {
			ci.IsConflict, ci.ConflictOf = true, n.ConflictOriginalID
		}
		out := noteWithRelations{Note: toNote(n, false), Relations: rel, conflictInfo: ci}
		if in.IncludeBody == nil || *in.IncludeBody {
			if out.Body, out.bodyView, err = viewBody(n.Body, in.View, in.Heading, o.maxWholeBody()); err != nil {
				return noteWithRelations{}, err
			}
		}
		return out, nil
	})
}

type createNoteIn struct {
	NotebookID string `json:"notebook_id" schema:"id"`
	Title      string `json:"title" schema:"min=1,max=500"`
	Body       string `json:"body,omitempty" schema:"max=@max_body"`
	IsTodo     bool   `json:"is_todo,omitempty"`
	TodoDue    int64  `json:"todo_due,omitempty" jsonschema:"Unix ms; 0 = none." schema:"min=0,max=9007199254740992"`
}

func (o *Ops) createNote() registry.Operation {
	desc := "Create a note in a notebook. A same-titled note there (trashed included) fails with NOTE_ALREADY_EXISTS."
	return registry.Define(o.meta("create_note", "Create a note", desc, registry.EffectCreate), o.doCreateNote)
}

func (o *Ops) doCreateNote(ctx context.Context, in createNoteIn) (Note, error) {
	unlock, err := o.lockCreates(ctx)
	if err != nil {
		return Note{}, err
	}
	defer unlock()

	if err := o.liveNotebook(ctx, in.NotebookID); err != nil {
		return Note{}, err
	}
	want := NormalizeTitle(in.Title)
	same, err := o.collectNotes(ctx, "id,parent_id,title,deleted_time", func(n joplin.Note) bool {
		return n.ParentID == in.NotebookID && NormalizeTitle(n.Title) == want
	})
	if err != nil {
		return Note{}, err
	}
	if len(same) > 0 {
		matches := make([]match, 0, len(same))
		for _, n := range same {
			matches = append(matches, match{ID: n.ID, Trashed: n.DeletedTime > 0})
		}
		return Note{}, alreadyExists(domainerr.NoteAlreadyExists, "note", "update_note", "restore_note", matches)
	}

	id := joplin.NewID()
	req := map[string]any{"id": id, "parent_id": in.NotebookID, "title": in.Title, "body": in.Body}
	if in.IsTodo {
		req["is_todo"] = 1
		req["todo_due"] = in.TodoDue
	}
	var created joplin.Note
	if err := o.c.Write(ctx, "POST", "/notes", nil, req, &created); err != nil {
		load := func(ctx context.Context) (joplin.Note, error) { return o.loadNote(ctx, id, noteFields) }
		if created, err = confirmCreate(ctx, err, id, load, func(n joplin.Note) bool {
			return n.ParentID == in.NotebookID && n.Title == in.Title && n.Body == in.Body && n.DeletedTime == 0 &&
				n.IsTodo == boolInt(in.IsTodo) && (!in.IsTodo || n.TodoDue == in.TodoDue)
		}); err != nil {
			return Note{}, err
		}
	}
	return toNote(created, true), nil
}

// withObjectID attaches the id of the object a write was about (the one a
// create chose, or the one it changed) to an uncertain-outcome error, so an
// operator can check it; the operator journal records the id.
func withObjectID(err error, id string) error {
	if de, ok := domainerr.As(err); ok && de.Code == domainerr.WriteOutcomeUnknown {
		return domainerr.New(de.Code, "%s; check object %s in Joplin before retrying", de.Message, id).
			WithDetails(map[string]any{"id": id})
	}
	return err
}
