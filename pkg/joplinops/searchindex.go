package joplinops

import (
	"context"

	"github.com/notebridge/notebridge/pkg/joplinindex"
)

// WithSearchIndex makes search answer from the embedded index x and
// keeps x fresh after every write these operations make.
func WithSearchIndex(x *joplinindex.Indexer) Option {
	return func(o *Ops) { o.index = x }
}

// indexNotes updates the index after a write to notes ids.
func (o *Ops) indexNotes(ctx context.Context, ids ...string) {
	if o.index != nil && len(ids) > 0 {
		o.index.NotesChanged(ctx, ids...)
	}
}

// indexFolders updates the index after a notebook or tag write.
func (o *Ops) indexFolders(ctx context.Context) {
	if o.index != nil {
		o.index.FoldersChanged(ctx)
	}
}

// indexNoteAnswer updates the index from a note write's answer.
func (o *Ops) indexNoteAnswer(ctx context.Context, answer []byte) {
	if o.index != nil {
		o.index.NoteWritten(ctx, answer)
	}
}

// indexTag updates the index after a tag is created or renamed.
func (o *Ops) indexTag(ctx context.Context, id, title string) {
	if o.index != nil {
		o.index.TagSaved(ctx, id, title)
	}
}

// indexTagDeleted updates the index after a tag is deleted.
func (o *Ops) indexTagDeleted(ctx context.Context, id string) {
	if o.index != nil {
		o.index.TagDeleted(ctx, id)
	}
}

// indexTagLink updates the index after a note is tagged or untagged.
func (o *Ops) indexTagLink(ctx context.Context, noteID, tagID string, linked bool) {
	if o.index != nil {
		o.index.TagLinked(ctx, noteID, tagID, linked)
	}
}
