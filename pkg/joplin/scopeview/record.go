package scopeview

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// recorder is the installed View: the scope View, then the ids of what it
// let through added to the call's activity.Collector (the activity log's
// notes, notebooks, tags and resources). Only answers the caller is served
// are read, after narrowing; the view's own lookups (WholeJoplin) never
// pass here.
type recorder struct{ *View }

// Narrow implements joplin.View.
func (r recorder) Narrow(ctx context.Context, req joplin.Request, answer []byte) ([]byte, error) {
	out, err := r.View.Narrow(ctx, req, answer)
	if err == nil {
		if col := activity.CollectorFrom(ctx); col != nil {
			servedIDs(col, req, out)
		}
	}
	return out, err
}

// recordWrite is the client observer adding what a write changed.
func recordWrite(ctx context.Context, w joplin.Write) {
	col := activity.CollectorFrom(ctx)
	if col == nil {
		return
	}
	switch w.Kind {
	case joplin.NoteSaved, joplin.NoteTrashed:
		col.Add(activity.Note, w.ID)
	case joplin.NotebookSaved, joplin.NotebookTrashed:
		col.Add(activity.Notebook, w.ID)
	case joplin.TagSaved, joplin.TagDeleted:
		col.Add(activity.Tag, w.ID)
	case joplin.TagLinked, joplin.TagUnlinked:
		col.Add(activity.Tag, w.ID)
		col.Add(activity.Note, w.NoteID)
	case joplin.ResourceSaved, joplin.ResourceDeleted:
		col.Add(activity.Resource, w.ID)
	}
}

// servedIDs adds the ids of answer to col: one object's from the path,
// a list's from its items.
func servedIDs(col *activity.Collector, req joplin.Request, answer []byte) {
	parts := strings.Split(strings.Trim(req.Path, "/"), "/")
	kind, ok := kindOf(parts[0])
	if parts[0] == "search" {
		kind, ok = searchKind(req.Query.Get("type")), true
	}
	switch {
	case !ok:
	case len(parts) == 1:
		col.Add(kind, itemIDs(answer)...)
	case len(parts) >= 2:
		col.Add(kind, parts[1]) // the object, its file or its relations
		if len(parts) == 3 {
			if rel, ok := kindOf(parts[2]); ok {
				col.Add(rel, itemIDs(answer)...)
			}
		}
	}
}

func kindOf(collection string) (activity.Kind, bool) {
	switch collection {
	case "notes":
		return activity.Note, true
	case "folders":
		return activity.Notebook, true
	case "tags":
		return activity.Tag, true
	case "resources":
		return activity.Resource, true
	}
	return 0, false
}

func searchKind(typ string) activity.Kind {
	switch typ {
	case "folder":
		return activity.Notebook
	case "tag":
		return activity.Tag
	case "resource":
		return activity.Resource
	}
	return activity.Note
}

// itemIDs returns the ids of a list answer's items.
func itemIDs(answer []byte) []string {
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if json.Unmarshal(answer, &page) != nil {
		return nil
	}
	ids := make([]string, len(page.Items))
	for i, it := range page.Items {
		ids[i] = it.ID
	}
	return ids
}
