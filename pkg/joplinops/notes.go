package joplinops

import (
	"context"

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/registry"
	"github.com/notebridge/notebridge/pkg/schema"
)

// Note is a Joplin note as the operations return it.
type Note struct {
	ID            string  `json:"id"`
	ParentID      string  `json:"notebook_id"`
	Title         string  `json:"title"`
	Body          *string `json:"body,omitempty"`
	IsTodo        bool    `json:"is_todo"`
	TodoDue       int64   `json:"todo_due"`
	TodoCompleted int64   `json:"todo_completed"`
	CreatedTime   int64   `json:"created_time"`
	UpdatedTime   int64   `json:"updated_time"`
	Trashed       bool    `json:"trashed"`
}

// apiNote is a note as Joplin encodes it.
type apiNote struct {
	ID            string `json:"id"`
	ParentID      string `json:"parent_id"`
	Title         string `json:"title"`
	Body          string `json:"body"`
	IsTodo        int    `json:"is_todo"`
	TodoDue       int64  `json:"todo_due"`
	TodoCompleted int64  `json:"todo_completed"`
	CreatedTime   int64  `json:"created_time"`
	UpdatedTime   int64  `json:"updated_time"`
	DeletedTime   int64  `json:"deleted_time"`
	IsConflict    int    `json:"is_conflict"`
	OriginalID    string `json:"conflict_original_id"`
}

const noteFields = "id,parent_id,title,body,is_todo,todo_due,todo_completed,created_time,updated_time,deleted_time"

// getNoteFields adds what says whether a note is a conflict copy.
const getNoteFields = noteFields + ",is_conflict,conflict_original_id"

func (n apiNote) toNote(withBody bool) Note {
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

func noteSchema() schema.S {
	return schema.Object("A Joplin note.", map[string]any{
		"id":             schema.ID(""),
		"notebook_id":    schema.ID("Id of the notebook holding the note."),
		"title":          schema.String("", 0, 10_000),
		"body":           schema.String("Markdown body; present when requested.", 0, 100_000_000),
		"is_todo":        schema.Bool("Whether the note is a to-do."),
		"todo_due":       timeSchema,
		"todo_completed": timeSchema,
		"created_time":   timeSchema,
		"updated_time":   timeSchema,
		"trashed":        schema.Bool("Whether the note is in the trash."),
	}, "id", "notebook_id", "title", "is_todo", "todo_due", "todo_completed", "created_time", "updated_time", "trashed")
}

type getNoteIn struct {
	ID          string   `json:"id"`
	IncludeBody *bool    `json:"include_body"`
	Include     []string `json:"include"`
}

type noteWithRelations struct {
	Note
	Relations
	conflictInfo
}

// conflictInfo links a note and its conflict copies (sync_status.go).
type conflictInfo struct {
	IsConflict bool `json:"is_conflict,omitempty"`
	// ConflictOf is set on a conflict copy: the note it conflicts with.
	ConflictOf string `json:"conflict_of,omitempty"`
	// ConflictCopies are the conflict copies of this note.
	ConflictCopies []string `json:"conflict_copies,omitempty"`
}

func addConflictInfo(out schema.S) {
	props := out["properties"].(map[string]any)
	props["is_conflict"] = schema.Bool("Set when this note is a conflict copy.")
	props["conflict_of"] = schema.String("Set when this note is a conflict copy Joplin made during a sync: the id of the note it conflicts with (which holds the other device's version). A copy is never uploaded.", 0, 32)
	props["conflict_copies"] = schema.Array("Conflict copies of this note (this profile's versions that lost to another device's edit in a sync): read them with get_note, merge with update_note, then trash them.",
		schema.ID(""), MaxConflicts)
}

func (o *Ops) getNote() registry.Operation {
	in := schema.Object("", map[string]any{
		"id":           schema.ID(""),
		"include_body": schema.Default(schema.Bool(""), true),
		"include": schema.Array("links: notes the body links to; backlinks: notes linking here (scans all notes).",
			schema.Enum("", "tags", "resources", "links", "backlinks"), 4),
	}, "id")
	out := noteSchema()
	addRelations(out)
	addConflictInfo(out)
	return op("get_note", "Get note", "Read a note by id (trashed included), optionally with its tags, resources, linked notes and backlinks; says when it is, or has, a sync conflict copy.",
		registry.EffectRead, in, out, registry.Func(func(ctx context.Context, in getNoteIn) (noteWithRelations, error) {
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
				ci.IsConflict, ci.ConflictOf = true, n.OriginalID
			}
			return noteWithRelations{Note: n.toNote(in.IncludeBody == nil || *in.IncludeBody), Relations: rel, conflictInfo: ci}, nil
		}))
}

type createNoteIn struct {
	NotebookID string `json:"notebook_id"`
	Title      string `json:"title"`
	Body       string `json:"body"`
	IsTodo     bool   `json:"is_todo"`
	TodoDue    int64  `json:"todo_due"`
}

func (o *Ops) createNote() registry.Operation {
	in := schema.Object("", map[string]any{
		"notebook_id": schema.ID(""),
		"title":       titleSchema,
		"body":        schema.String("", 0, MaxBodyChars),
		"is_todo":     schema.Bool(""),
		"todo_due":    timeSchema,
	}, "notebook_id", "title")
	desc := "Create a note in a notebook. A same-titled note there (trashed included) fails with NOTE_ALREADY_EXISTS."
	return op("create_note", "Create note", desc, registry.EffectCreate, in, noteSchema(),
		registry.Func(o.doCreateNote))
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
	same, err := o.collectNotes(ctx, "id,parent_id,title,deleted_time", func(n apiNote) bool {
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
	var created apiNote
	if err := o.c.Write(ctx, "POST", "/notes", nil, req, &created); err != nil {
		load := func(ctx context.Context) (apiNote, error) { return o.loadNote(ctx, id, noteFields) }
		if created, err = confirmCreate(ctx, err, id, load, func(n apiNote) bool {
			return n.ParentID == in.NotebookID && n.Title == in.Title && n.Body == in.Body && n.DeletedTime == 0 &&
				n.IsTodo == boolInt(in.IsTodo) && (!in.IsTodo || n.TodoDue == in.TodoDue)
		}); err != nil {
			return Note{}, err
		}
	}
	o.indexNotes(ctx, id)
	return created.toNote(true), nil
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
