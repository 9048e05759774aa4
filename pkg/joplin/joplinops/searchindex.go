package joplinops

import (
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
)

// WithSearchIndex makes search answer from the embedded index x. x keeps
// itself fresh: the client tells it of every write these operations make
// (joplinindex.New).
func WithSearchIndex(x *joplinindex.Indexer) Option {
	return func(o *Ops) { o.index = x }
}

// WithNotebookView gives the operations the notebook-scope view installed
// on their client, for what does not go through the client: searches of
// the embedded index and joplin_status's list of visible notebooks.
// Without it, a caller limited to some notebooks searches through Joplin
// (narrowed by the client) and is told no notebook names.
func WithNotebookView(v *scopeview.View) Option {
	return func(o *Ops) { o.view = v }
}
