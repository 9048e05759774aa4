package scopeview

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// Audience returns who may see what the write w changed (a note saved or
// trashed, a notebook trashed): a caller whose scope reads the note's
// notebook, or the trashed notebook. An unlimited caller sees every
// change; when the notebook cannot be told (a note deleted for good,
// Joplin not answering) only an unlimited caller does. ctx is the
// write's, as its observers get it; the notebook is looked up once, when
// the first limited caller is asked about.
func (v *View) Audience(ctx context.Context, w joplin.Write) func(principal.Principal) bool {
	notebook := sync.OnceValue(func() string { return v.writtenNotebook(ctx, w) })
	return func(p principal.Principal) bool {
		sc := p.Notebooks()
		if sc.Unlimited() {
			return true
		}
		nb := notebook()
		if nb == "" {
			return false
		}
		s, _, err := v.resolve(principal.With(ctx, p), sc)
		return err == nil && s.read.Has(nb)
	}
}

// writtenNotebook is the notebook w changed: the notebook itself, or the
// note's (from Joplin's answer, else read again); "" when unknown.
func (v *View) writtenNotebook(ctx context.Context, w joplin.Write) string {
	switch w.Kind {
	case joplin.NotebookSaved, joplin.NotebookTrashed:
		return w.ID
	case joplin.NoteSaved, joplin.NoteTrashed:
	default:
		return ""
	}
	var n struct {
		ParentID string `json:"parent_id"`
	}
	if json.Unmarshal(w.Answer, &n) == nil && n.ParentID != "" {
		return n.ParentID
	}
	if w.ID == "" || v.c.Get(joplin.WholeJoplin(ctx), "/notes/"+url.PathEscape(w.ID), url.Values{"fields": {"id,parent_id"}}, &n) != nil {
		return ""
	}
	return n.ParentID
}
