package joplinops

import (
	"context"
	"net/url"
	"strconv"

	"github.com/notebridge/notebridge/pkg/registry"
	"github.com/notebridge/notebridge/pkg/schema"
)

type searchIn struct {
	Query string `json:"query"`
	Type  string `json:"type"`
	Limit int    `json:"limit"`
	Page  int    `json:"page"`
}

// SearchHit is one search result.
type SearchHit struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	NotebookID string `json:"notebook_id,omitempty"`
	Trashed    bool   `json:"trashed"`
}

type searchOut struct {
	Type    string      `json:"type"`
	Items   []SearchHit `json:"items"`
	HasMore bool        `json:"has_more"`
	Page    int         `json:"page"`
}

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
		"query": schema.String("Notes: Joplin query syntax (words, \"phrases\", title:, body:, tag:, notebook:, -exclusion, prefix*). Notebooks and tags: title, * as wildcard.", 1, 1000),
		"type":  schema.Default(schema.Enum("", SearchTypes...), "note"),
		"limit": schema.Default(schema.Integer("", 1, 100), 20),
		"page":  schema.Integer("", 1, 10_000),
	}, "query")
	hit := schema.Object("", map[string]any{
		"id":          schema.ID("Object id."),
		"title":       schema.String("", 0, 10_000),
		"notebook_id": schema.String("Parent notebook id, for notes and notebooks.", 0, 32),
		"trashed":     schema.Bool("Whether the object is in the trash."),
	}, "id", "title", "trashed")
	out := schema.Object("", map[string]any{
		"type":     schema.Enum("What was searched.", SearchTypes...),
		"items":    schema.Array("Matches.", hit, 100),
		"has_more": schema.Bool("Whether another page may hold more matches."),
		"page":     schema.Integer("This page.", 1, 10_000),
	}, "type", "items", "has_more", "page")
	desc := "Full-text search of notes (trashed excluded), or of notebook and tag titles. Joplin indexes notes late: a note edited just now may be missing; list_notes sees it at once."
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
		}))
}
