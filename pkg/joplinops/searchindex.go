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
