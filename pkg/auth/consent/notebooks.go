package consent

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

// The form's notebook fields: "all_notebooks" (every notebook, read and,
// when asked for, write), "notebook" (one per notebook shared to read) and
// "write_notebook" (one per notebook shared to change, only when the
// application asks to change notes). Nothing is checked when the page
// opens; an approval may check only the boxes its page showed (offer.go).
const (
	fieldAll   = "all_notebooks"
	fieldRead  = "notebook"
	fieldWrite = "write_notebook"
)

// Tree lists Joplin's notebooks for the page (the owner's whole tree).
type Tree func(ctx context.Context) (*notebookscope.Tree, error)

// notebookNode is one notebook of the form's tree.
type notebookNode struct {
	ID, Title string
	CanWrite  bool
	Children  []notebookNode
}

// nodes builds the form's tree below parent, trashed notebooks left out.
func nodes(t *notebookscope.Tree, parent string, canWrite bool, depth int) []notebookNode {
	if depth > 100 {
		return nil
	}
	var out []notebookNode
	for _, f := range t.Children(parent) {
		if f.Trashed {
			continue
		}
		out = append(out, notebookNode{ID: f.ID, Title: f.Title, CanWrite: canWrite, Children: nodes(t, f.ID, canWrite, depth+1)})
	}
	return out
}

// notebookForm fills the notebook part of the form: the tree, or why it
// could not be read (then only "all notebooks" can be chosen).
func (p *Page) notebookForm(ctx context.Context, req oauthserver.ConsentRequest, d *formData) {
	if p.cfg.Notebooks == nil {
		return
	}
	d.AskNotebooks, d.CanWrite = true, req.Scopes.Has(scope.NotesWrite)
	t, err := p.cfg.Notebooks(ctx)
	if err != nil {
		d.NotebooksUnavailable = true
		return
	}
	d.Notebooks = nodes(t, "", d.CanWrite, 0)
}

// checkNotebooks returns what is wrong with the form's notebook choice
// ("" when nothing is): it must use only the boxes its page offered, whose
// digest the form's nonce carried.
func (p *Page) checkNotebooks(ctx context.Context, req oauthserver.ConsentRequest, form url.Values, offered offerDigest) string {
	if p.cfg.Notebooks == nil {
		return "" // the page asked nothing; Chosen shares every notebook
	}
	var d formData
	p.notebookForm(ctx, req, &d)
	now := offerOf(&d)
	if now.digest() != offered {
		return offerChanged
	}
	return now.check(form)
}

// Chosen implements oauthserver.NotebookChooser: what the approved form r
// shares, and the notebooks' paths for the operator. Without a notebook
// tree the page asks nothing and a grant covers every notebook.
func (p *Page) Chosen(r *http.Request) (notebookscope.Scope, string) {
	form := r.PostForm
	if p.cfg.Notebooks == nil || form.Get(fieldAll) == "1" {
		return notebookscope.Everything(), "all notebooks"
	}
	sc := notebookscope.New(notebookscope.Only(form[fieldRead]...), notebookscope.Only(form[fieldWrite]...))
	names := func(ids []string) string { return strings.Join(ids, ", ") }
	if t, err := p.cfg.Notebooks(r.Context()); err == nil {
		names = func(ids []string) string {
			paths := make([]string, 0, len(ids))
			for _, id := range ids {
				paths = append(paths, t.PathOf(id))
			}
			return strings.Join(paths, ", ")
		}
	}
	shown := "read: " + names(sc.Read.Refs())
	if w := sc.Write.Refs(); len(w) > 0 {
		shown += "; write: " + names(w)
	}
	return sc, shown
}
