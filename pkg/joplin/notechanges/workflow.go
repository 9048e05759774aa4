// Package notechanges is the reviewed-edit workflow of Joplin notes:
// changes to up to MaxPlanNotes notes are planned from the notes as they
// are, previewed as bounded diffs bound by a plan digest, applied once
// under the write lock with a durable receipt (a retry replays or
// completes it), and undone from that receipt. edit_note is the one-call
// form for one note. joplinops lists its operations; the workflow asks the
// rest of the Joplin operations only for what Joplin interface names.
package notechanges

import (
	"context"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
)

// Joplin is what the workflow asks of the other Joplin operations: their
// typed reads (which answer NOT_FOUND naming the object), the tag create,
// the lock every duplicate-checked write holds, and their shaping of
// titles and errors, so that the workflow answers exactly as they do.
type Joplin interface {
	// Lock waits for the right to check and write (the create lock).
	Lock(ctx context.Context) (unlock func(), err error)
	// Note reads one note, trashed or not, with fields.
	Note(ctx context.Context, id, fields string) (joplin.Note, error)
	// Tag checks that tag id exists.
	Tag(ctx context.Context, id string) error
	// Notebook reads whether notebook id is in the trash.
	Notebook(ctx context.Context, id string) (trashed bool, err error)
	// TagsTitled lists the ids of the tags whose normalised title is title's.
	TagsTitled(ctx context.Context, title string) ([]string, error)
	// SurelyNewTag reports that no tag is titled title, as far as a local
	// record can tell without asking Joplin; false when it cannot tell.
	SurelyNewTag(ctx context.Context, title string) bool
	// PostTag creates a tag titled title, or returns the one tag Joplin
	// says has it already; the caller holds the lock.
	PostTag(ctx context.Context, title string) (id string, err error)
	// Revision returns the title and body of note noteID at revision revID.
	Revision(ctx context.Context, noteID, revID string) (title, body string, err error)
	// NormalizeTitle is the natural identity of a title.
	NormalizeTitle(s string) string
	// Missing turns Joplin's NOT_FOUND for id into the error naming role.
	Missing(err error, role, id string) error
	// WithObjectID names id in the error of a write whose outcome is unknown.
	WithObjectID(err error, id string) error
}

// Config configures the workflow.
type Config struct {
	Client *joplin.Client
	Joplin Joplin
	// Receipts keeps the receipts; nil fails every call that needs one.
	Receipts *receipts.Store
	// Meta describes an operation of the Joplin toolset (its vocabulary
	// holds the bounds the input and output types name).
	Meta func(name, title, description string, effect registry.Effect) registry.Meta
	// MaxBodyChars bounds a note's body, in characters; MaxTags the tags
	// of a note read.
	MaxBodyChars, MaxTags int
}

// Workflow runs the reviewed edits of one Joplin.
type Workflow struct {
	c        *joplin.Client
	j        Joplin
	receipts *receipts.Store
	meta     func(name, title, description string, effect registry.Effect) registry.Meta
	maxBody  int
	maxTags  int
	// memo holds the bases of recent previews.
	memo previewMemo
}

// New returns the workflow of cfg.
func New(cfg Config) *Workflow {
	return &Workflow{c: cfg.Client, j: cfg.Joplin, receipts: cfg.Receipts, meta: cfg.Meta, maxBody: cfg.MaxBodyChars, maxTags: cfg.MaxTags}
}

// Operations returns the reviewed-edit operations in catalog order.
func (w *Workflow) Operations() []registry.Operation {
	return []registry.Operation{w.editNote(), w.previewNoteChanges(), w.applyNoteChanges(), w.undoNoteChanges()}
}

// tagRef is a tag as a note's tag list reads it.
type tagRef struct {
	ID string `json:"id"`
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nonNil returns s, or an empty slice for nil (encoded [], not null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
