package joplinops

import (
	"context"
	"net/url"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/scopepin"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
)

type statusOut struct {
	Reachable     bool   `json:"reachable"`
	Authenticated bool   `json:"authenticated"`
	Code          string `json:"code,omitempty" schema:"max=64"`
	Message       string `json:"message" schema:"max=500"`
	// Index is the search index's state, when notebridge keeps one.
	Index *joplinindex.Status `json:"index,omitempty"`
	// Sync is the sync state the Joplin container reports; Conflicts, the
	// conflict copies Joplin holds (when Joplin answered).
	Sync      *syncOut      `json:"sync"`
	Conflicts *conflictsOut `json:"conflicts,omitempty"`
	// Notebooks says which notebooks the caller may see and change.
	Notebooks *notebookScopeOut `json:"notebooks,omitempty"`
	// ActivityLog is the activity log's health, when the bridge keeps one.
	ActivityLog *activityLogOut `json:"activity_log,omitempty"`
}

// notebookScopeOut is the caller's notebook scope, by path: the top of
// each branch it may read or write (their sub-notebooks are included).
type notebookScopeOut struct {
	All   bool     `json:"all"`
	Read  []string `json:"read" schema:"max=@max_notebooks,itemmax=65536"`
	Write []string `json:"write" schema:"max=@max_notebooks,itemmax=65536"`
	// Mismatches are the configured notebook paths that no longer name
	// the notebooks they named when the credential was configured; it
	// still covers only those (covers: their paths now).
	Mismatches []scopepin.Mismatch `json:"mismatches,omitempty" schema:"max=@max_notebooks"`
}

type statusIn struct{}

func (o *Ops) joplinStatus() registry.Operation {
	desc := "Check that Joplin is reachable and accepts the token; report the sync with the person's other devices (target, last success, last error, encryption) and conflict copies."
	return registry.Define(o.meta("joplin_status", "Check Joplin, sync and search", desc, registry.EffectRead), func(ctx context.Context, _ statusIn) (statusOut, error) {
		out, err := o.status(ctx)
		if err != nil {
			return out, err
		}
		out.Sync = o.syncStatus()
		out.ActivityLog = o.activityStatus()
		sc := o.callerScope(ctx)
		out.Notebooks = &notebookScopeOut{All: sc.All, Read: nonNil(sc.ReadPaths), Write: nonNil(sc.WritePaths), Mismatches: sc.Mismatches}
		if !sc.All && out.Sync.E2EE != nil {
			// The container counts every notebook's items; count the
			// caller's notes instead.
			out.Sync.E2EE.ItemsEncrypted, out.Sync.E2EE.Counted = nil, ""
		}
		if out.Authenticated {
			// Details: a failure to read them leaves them out.
			out.Conflicts, _ = o.conflictStatus(ctx)
			if e := out.Sync.E2EE; e != nil && e.ItemsEncrypted == nil {
				if n, err := o.encryptedNotes(ctx); err == nil {
					e.ItemsEncrypted, e.Counted = &n, "notes"
				}
			}
		}
		if o.index != nil {
			o.index.Start()
			var st joplinindex.Status
			if sc.All {
				st = o.index.Status()
			} else {
				st = o.index.StatusIn(ctx, sc.Readable.IDs())
			}
			if len(st.Error) > 2000 {
				st.Error = st.Error[:2000]
			}
			if m := st.Meaning; m != nil && len(m.Error) > 2000 {
				m.Error = m.Error[:2000]
			}
			out.Index = &st
		}
		return out, err
	})
}

// callerScope is the notebook scope of ctx's caller. Without a view, or
// while Joplin cannot say, a limited caller is told no notebook (it sees
// Joplin through the client's view all the same).
func (o *Ops) callerScope(ctx context.Context) scopeview.Scope {
	if !scopeview.Limited(ctx) {
		return scopeview.Scope{All: true}
	}
	if o.view == nil {
		return scopeview.Scope{}
	}
	sc, err := o.view.Of(ctx)
	if err != nil {
		return scopeview.Scope{}
	}
	return sc
}

func (o *Ops) status(ctx context.Context) (statusOut, error) {
	if err := o.c.Ping(ctx); err != nil {
		return statusFromErr(false, err, o.c.BaseURL())
	}
	var page struct{}
	if err := o.c.Get(ctx, "/folders", url.Values{"limit": {"1"}, "fields": {"id"}}, &page); err != nil {
		return statusFromErr(true, err, o.c.BaseURL())
	}
	return statusOut{Reachable: true, Authenticated: true, Message: "Joplin is reachable and the token is accepted"}, nil
}

// statusFromErr reports err with the Joplin URL that was tried (an origin
// without the token), so an operator can spot a wrong --joplin-url.
func statusFromErr(reachable bool, err error, joplinURL string) (statusOut, error) {
	de, ok := domainerr.As(err)
	if !ok {
		return statusOut{}, err
	}
	if len(joplinURL) > maxURLInStatus {
		joplinURL = joplinURL[:maxURLInStatus] + "..."
	}
	return statusOut{Reachable: reachable && de.Code != domainerr.JoplinUnavailable, Code: string(de.Code),
		Message: de.Message + " (Joplin URL " + joplinURL + ")"}, nil
}

// maxURLInStatus keeps the status message within its 500-character schema.
const maxURLInStatus = 200
