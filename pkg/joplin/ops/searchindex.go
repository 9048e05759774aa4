package joplinops

import joplinindex "github.com/notebridge/notebridge/pkg/joplin/index"

// WithSearchIndex makes search answer from the embedded index x. x keeps
// itself fresh: the client tells it of every write these operations make
// (joplinindex.New).
func WithSearchIndex(x *joplinindex.Indexer) Option {
	return func(o *Ops) { o.index = x }
}
