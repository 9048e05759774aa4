package joplinops

import (
	"context"
	"net/url"
	"strconv"

	"github.com/notebridge/notebridge/pkg/registry"
	"github.com/notebridge/notebridge/pkg/schema"
	"github.com/notebridge/notebridge/pkg/searchindex"
)

type searchIn struct {
	Query          string `json:"query"`
	Type           string `json:"type"`
	Limit          int    `json:"limit"`
	Page           int    `json:"page"`
	IncludeTrashed bool   `json:"include_trashed"`
}

// SearchHit is one search result.
type SearchHit struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	NotebookID string `json:"notebook_id,omitempty"`
	Trashed    bool   `json:"trashed"`
	Snippet    string `json:"snippet,omitempty"`
}

type searchOut struct {
	Type    string      `json:"type"`
	Items   []SearchHit `json:"items"`
	HasMore bool        `json:"has_more"`
	Page    int         `json:"page"`
	Index   string      `json:"index,omitempty"`
}

// IndexStates are the values of the search result's index field: ready
// when the embedded index answered, otherwise why Joplin's search did.
var IndexStates = []string{"ready", "off", "idle", "building", "paused", "failed", "unsupported_query"}

// searchTypes maps each search type the tool accepts to the Joplin item
// type it searches and the fields it asks for. Joplin answers HTTP 500 for
// a field its table lacks: tags have neither parent_id nor deleted_time.
var searchTypes = map[string]struct{ joplinType, fields string }{
	"note":     {"note", "id,title,parent_id,deleted_time"},
	"notebook": {"folder", "id,title,parent_id,deleted_time"},
	"tag":      {"tag", "id,title"},
}

// SearchTypes lists the search types the tool accepts, in schema order.
var SearchTypes = []string{"note", "notebook", "tag"}

func (o *Ops) search() registry.Operation {
	in := schema.Object("", map[string]any{
		"query":           schema.String("Notes: Joplin query syntax (words, \"phrases\", title:, body:, tag:, notebook:, -exclusion, prefix*). Notebooks and tags: title, * as wildcard.", 1, 1000),
		"type":            schema.Default(schema.Enum("", SearchTypes...), "note"),
		"limit":           schema.Default(schema.Integer("", 1, 100), 20),
		"page":            schema.Integer("", 1, 10_000),
		"include_trashed": schema.Bool("Notes: include trashed notes."),
	}, "query")
	hit := schema.Object("", map[string]any{
		"id":          schema.ID("Object id."),
		"title":       schema.String("", 0, 10_000),
		"notebook_id": schema.String("Parent notebook id, for notes and notebooks.", 0, 32),
		"trashed":     schema.Bool("Whether the object is in the trash."),
		"snippet":     schema.String("Notes: extract, matches in **.", 0, 2000),
	}, "id", "title", "trashed")
	out := schema.Object("", map[string]any{
		"type":     schema.Enum("What was searched.", SearchTypes...),
		"items":    schema.Array("Matches.", hit, 100),
		"has_more": schema.Bool("Whether another page may hold more matches."),
		"page":     schema.Integer("This page.", 1, 10_000),
		"index":    schema.Enum("Notes: ready = ranked by notebridge's index (sees every write); else Joplin's search answered (may miss recent edits) and this says why.", IndexStates...),
	}, "type", "items", "has_more", "page")
	desc := "Ranked full-text search of notes (trashed excluded unless asked), or of notebook and tag titles."
	return op("search", "Search", desc, registry.EffectRead, in, out,
		registry.Func(func(ctx context.Context, in searchIn) (searchOut, error) {
			if in.Type == "" {
				in.Type = "note"
			}
			if in.Limit == 0 {
				in.Limit = 20
			}
			if in.Page == 0 {
				in.Page = 1
			}
			if in.Type == "note" {
				res, ok, err := o.searchIndex(ctx, in)
				if ok || err != nil {
					return res, err
				}
				out, err := o.joplinSearch(ctx, in)
				out.Index = res.Index
				return out, err
			}
			return o.joplinSearch(ctx, in)
		}))
}

// searchIndex answers a note search from the embedded index; ok is false
// when Joplin's search must answer (res.Index then says why).
func (o *Ops) searchIndex(ctx context.Context, in searchIn) (res searchOut, ok bool, err error) {
	if o.index == nil {
		return searchOut{Index: "off"}, false, nil
	}
	opts := searchindex.Options{Limit: in.Limit, Offset: (in.Page - 1) * in.Limit, IncludeTrashed: in.IncludeTrashed}
	hits, state, ok, err := o.index.Search(ctx, in.Query, opts)
	if err != nil || !ok {
		return searchOut{Index: state}, false, err
	}
	res = searchOut{Type: "note", Items: make([]SearchHit, 0, len(hits)), Page: in.Page, Index: state}
	for i, h := range hits {
		if i == in.Limit {
			res.HasMore = true
			break
		}
		res.Items = append(res.Items, SearchHit{ID: h.ID, Title: h.Title, NotebookID: h.ParentID, Trashed: h.Deleted > 0, Snippet: h.Snippet})
	}
	return res, true, nil
}

// joplinSearch passes the search to Joplin's /search.
func (o *Ops) joplinSearch(ctx context.Context, in searchIn) (searchOut, error) {
	st := searchTypes[in.Type]
	q := url.Values{
		"query": {in.Query}, "type": {st.joplinType},
		"limit": {strconv.Itoa(in.Limit)}, "page": {strconv.Itoa(in.Page)},
		"fields": {st.fields},
	}
	var page struct {
		Items []struct {
			ID          string `json:"id"`
			Title       string `json:"title"`
			ParentID    string `json:"parent_id"`
			DeletedTime int64  `json:"deleted_time"`
		} `json:"items"`
		HasMore bool `json:"has_more"`
	}
	if err := o.c.Get(ctx, "/search", q, &page); err != nil {
		return searchOut{}, err
	}
	res := searchOut{Type: in.Type, Items: make([]SearchHit, 0, len(page.Items)), HasMore: page.HasMore, Page: in.Page}
	for _, it := range page.Items {
		h := SearchHit{ID: it.ID, Title: it.Title, Trashed: it.DeletedTime > 0}
		if in.Type != "tag" {
			h.NotebookID = it.ParentID
		}
		res.Items = append(res.Items, h)
	}
	return res, nil
}
