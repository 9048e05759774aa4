package joplinops

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
)

type listNotesIn struct {
	NotebookID     string `json:"notebook_id,omitempty" jsonschema:"Direct children only." schema:"id"`
	TagID          string `json:"tag_id,omitempty" schema:"id"`
	ResourceID     string `json:"resource_id,omitempty" schema:"id"`
	IncludeTrashed bool   `json:"include_trashed,omitempty"`
	IncludeBody    bool   `json:"include_body,omitempty"`
	OrderBy        string `json:"order_by,omitempty" schema:"enum=updated_time|created_time|title,default=updated_time"`
	OrderDir       string `json:"order_dir,omitempty" schema:"enum=asc|desc,default=desc"`
	Limit          int    `json:"limit,omitempty" schema:"min=1,max=100,default=50"`
	Page           int    `json:"page,omitempty" schema:"min=1,max=@max_page"`
}

type listNotesOut struct {
	Notes   []Note `json:"notes" schema:"max=100"`
	Page    int    `json:"page" schema:"min=1,max=@max_page"`
	HasMore bool   `json:"has_more"`
}

// MaxPage bounds the page number of paged lists.
const MaxPage = 100_000

func (o *Ops) listNotes() registry.Operation {
	desc := "List notes, optionally in one notebook, with one tag or linking to one resource (one filter at most). Paged; bodies only when asked."
	return registry.Define(o.meta("list_notes", "Browse notes by notebook or tag", desc, registry.EffectRead), o.doListNotes)
}

func (o *Ops) doListNotes(ctx context.Context, in listNotesIn) (listNotesOut, error) {
	filters := 0
	for _, f := range []string{in.NotebookID, in.TagID, in.ResourceID} {
		if f != "" {
			filters++
		}
	}
	if filters > 1 {
		return listNotesOut{}, domainerr.New(domainerr.InvalidArgument, "give at most one of notebook_id, tag_id and resource_id")
	}
	if in.OrderBy == "" {
		in.OrderBy = "updated_time"
	}
	if in.OrderDir == "" {
		in.OrderDir = "desc"
	}
	if in.Limit == 0 {
		in.Limit = 50
	}
	if in.Page == 0 {
		in.Page = 1
	}
	fields := "id,parent_id,title,is_todo,todo_due,todo_completed,created_time,updated_time,deleted_time"
	if in.IncludeBody {
		fields += ",body"
	}
	var (
		rows []joplin.Note
		err  error
	)
	switch {
	case in.NotebookID != "" && !in.IncludeTrashed:
		return o.notebookPage(ctx, in, fields)
	case in.NotebookID != "":
		if _, err := o.loadNotebook(ctx, in.NotebookID, "notebook"); err != nil {
			return listNotesOut{}, err
		}
		// The notebook's own note list hides trashed notes: scan.
		rows, err = o.collectNotes(ctx, fields, func(n joplin.Note) bool { return n.ParentID == in.NotebookID })
	case in.TagID != "":
		// Joplin loads a tag's notes in memory, and its sort of them is not
		// a total order (the comparator never answers "after"): every page
		// is read, then sorted and paged here.
		rows, err = joplin.ListAll[joplin.Note](ctx, o.c, "/tags/"+in.TagID+"/notes", url.Values{"fields": {fields}}, o.limits.MaxScan)
		err = missing(err, "tag", in.TagID)
	case in.ResourceID != "":
		if err := o.c.Get(ctx, "/resources/"+in.ResourceID, url.Values{"fields": {"id"}}, nil); err != nil {
			return listNotesOut{}, missing(err, "resource", in.ResourceID)
		}
		needle := ":/" + in.ResourceID
		rows, err = o.collectNotes(ctx, fields+",body", func(n joplin.Note) bool { return containsLink(n.Body, needle) })
		if !in.IncludeBody {
			for i := range rows {
				rows[i].Body = ""
			}
		}
	default:
		return o.pageFromJoplin(ctx, in, fields)
	}
	if err != nil {
		return listNotesOut{}, err
	}
	return pageLocally(rows, in), nil
}

// collectNotes scans every note and keeps those keep accepts.
func (o *Ops) collectNotes(ctx context.Context, fields string, keep func(joplin.Note) bool) ([]joplin.Note, error) {
	var out []joplin.Note
	err := o.scanNotes(ctx, fields, func(n joplin.Note) {
		if keep(n) {
			out = append(out, n)
		}
	})
	return out, err
}

// pageFromJoplin serves an unfiltered list with Joplin's own paging.
func (o *Ops) pageFromJoplin(ctx context.Context, in listNotesIn, fields string) (listNotesOut, error) {
	return o.joplinPage(ctx, "/notes", in, fields)
}

// notebookPage serves one notebook's live notes with one Joplin request.
// Joplin answers a missing notebook with a 500 (it reads the null folder's
// id), so only a failed request pays a second one, to tell NOT_FOUND.
func (o *Ops) notebookPage(ctx context.Context, in listNotesIn, fields string) (listNotesOut, error) {
	out, err := o.joplinPage(ctx, "/folders/"+in.NotebookID+"/notes", in, fields)
	if err == nil {
		return out, nil
	}
	if _, lerr := o.loadNotebook(ctx, in.NotebookID, "notebook"); lerr != nil {
		return listNotesOut{}, lerr
	}
	return listNotesOut{}, err
}

// joplinPage asks Joplin for one page of path, sorted by Joplin (titles
// compare case-insensitively for ASCII letters, ties by id).
func (o *Ops) joplinPage(ctx context.Context, path string, in listNotesIn, fields string) (listNotesOut, error) {
	q := url.Values{
		"fields": {fields}, "order_by": {in.OrderBy}, "order_dir": {strings.ToUpper(in.OrderDir)},
		"limit": {strconv.Itoa(in.Limit)}, "page": {strconv.Itoa(in.Page)},
	}
	if in.IncludeTrashed {
		q.Set("include_deleted", "1")
	}
	var p joplin.Page[joplin.Note]
	if err := o.c.Get(ctx, path, q, &p); err != nil {
		return listNotesOut{}, err
	}
	out := listNotesOut{Notes: make([]Note, 0, len(p.Items)), Page: in.Page, HasMore: p.HasMore}
	for _, n := range p.Items {
		out.Notes = append(out.Notes, toNote(n, in.IncludeBody))
	}
	return out, nil
}

// pageLocally filters trashed notes, sorts and pages rows the bridge
// collected itself.
func pageLocally(rows []joplin.Note, in listNotesIn) listNotesOut {
	kept := rows[:0]
	for _, n := range rows {
		if in.IncludeTrashed || n.DeletedTime == 0 {
			kept = append(kept, n)
		}
	}
	less := func(a, b joplin.Note) bool {
		switch in.OrderBy {
		case "title":
			return NormalizeTitle(a.Title) < NormalizeTitle(b.Title)
		case "created_time":
			return a.CreatedTime < b.CreatedTime
		}
		return a.UpdatedTime < b.UpdatedTime
	}
	sort.SliceStable(kept, func(i, j int) bool {
		if in.OrderDir == "desc" {
			return less(kept[j], kept[i])
		}
		return less(kept[i], kept[j])
	})
	start, end := pageBounds(in.Page, in.Limit, len(kept))
	out := listNotesOut{Notes: make([]Note, 0, end-start), Page: in.Page, HasMore: end < len(kept)}
	for _, n := range kept[start:end] {
		out.Notes = append(out.Notes, toNote(n, in.IncludeBody))
	}
	return out
}

// pageBounds returns the slice bounds of 1-based page of size limit over n
// items collected by the bridge itself.
func pageBounds(page, limit, n int) (start, end int) {
	start = min((page-1)*limit, n)
	return start, min(start+limit, n)
}
