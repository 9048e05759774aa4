package joplinops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/notechanges"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
)

// WithReceiptDir keeps the receipts of apply_note_changes and
// undo_note_changes under dir (the state directory), in a directory per
// Joplin endpoint (ReceiptDir), bounded by limits.
func WithReceiptDir(dir string, limits receipts.Limits) Option {
	return func(o *Ops) { o.receipts = receipts.Open(ReceiptDir(dir, o.c.Endpoint()), limits) }
}

// ReceiptDir is the receipt directory in dir for the Joplin at endpoint.
func ReceiptDir(dir, endpoint string) string {
	sum := sha256.Sum256([]byte(endpoint))
	return filepath.Join(dir, "receipts", "joplin-"+hex.EncodeToString(sum[:16]))
}

// reviewedOps returns the reviewed-edit operations (package notechanges)
// in catalog order.
func (o *Ops) reviewedOps() []registry.Operation {
	return notechanges.New(notechanges.Config{
		Client: o.c, Joplin: reviewedJoplin{o}, Receipts: o.receipts, Meta: o.meta,
		MaxBodyChars: MaxBodyChars, MaxTags: MaxTags,
	}).Operations()
}

// reviewedJoplin is what the reviewed-edit workflow asks of the other
// operations (notechanges.Joplin).
type reviewedJoplin struct{ o *Ops }

func (r reviewedJoplin) Lock(ctx context.Context) (func(), error) { return r.o.lockCreates(ctx) }

func (r reviewedJoplin) Note(ctx context.Context, id, fields string) (joplin.Note, error) {
	return r.o.loadNote(ctx, id, fields)
}

func (r reviewedJoplin) Tag(ctx context.Context, id string) error {
	_, err := r.o.loadTag(ctx, id)
	return err
}

func (r reviewedJoplin) Notebook(ctx context.Context, id string) (bool, error) {
	nb, err := r.o.loadNotebook(ctx, id, "notebook")
	return nb.DeletedTime > 0, err
}

func (r reviewedJoplin) TagsTitled(ctx context.Context, title string) ([]string, error) {
	matches, err := r.o.tagsTitled(ctx, title, "")
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.ID
	}
	return ids, err
}

func (r reviewedJoplin) SurelyNewTag(ctx context.Context, title string) bool {
	return r.o.tagSurelyNew(ctx, title)
}

func (r reviewedJoplin) PostTag(ctx context.Context, title string) (string, error) {
	return r.o.ensureTag(ctx, title)
}

func (r reviewedJoplin) Revision(ctx context.Context, noteID, revID string) (string, string, error) {
	_, st, err := r.o.revisionState(ctx, noteID, revID)
	return st.Title, st.Body, err
}

func (reviewedJoplin) NormalizeTitle(s string) string           { return NormalizeTitle(s) }
func (reviewedJoplin) Missing(err error, role, id string) error { return missing(err, role, id) }
func (reviewedJoplin) WithObjectID(err error, id string) error  { return withObjectID(err, id) }
