package joplinops

import (
	"context"
	"net/url"
	"strconv"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

type searchIn struct {
	Query          string `json:"query" jsonschema:"Notes: Joplin query syntax (words, \"phrases\", title:, body:, tag:, notebook:, -exclusion, prefix*). Notebooks and tags: title, * as wildcard." schema:"min=1,max=1000"`
	Type           string `json:"type,omitempty" schema:"enum=@search_type,default=note"`
	Limit          int    `json:"limit,omitempty" schema:"min=1,max=100,default=10"`
	Page           int    `json:"page,omitempty" schema:"min=1,max=10000"`
	IncludeTrashed bool   `json:"include_trashed,omitempty" jsonschema:"Notes: include trashed notes."`
	Mode           string `json:"mode,omitempty" jsonschema:"Notes: keyword (the words, ranked by BM25), semantic (by meaning, when an embedding provider is configured) or hybrid (both, fused). Default: hybrid once every note is embedded, else keyword." schema:"enum=@search_mode"`
}

// SearchHit is one search result: what an agent needs to choose a hit.
// trashed appears only when true.
type SearchHit struct {
	ID          string `json:"id" schema:"id"`
	Title       string `json:"title" schema:"max=10000"`
	NotebookID  string `json:"notebook_id,omitempty" schema:"max=32"`
	Trashed     bool   `json:"trashed,omitempty"`
	UpdatedTime int64  `json:"updated_time,omitempty" schema:"min=0"`
	Snippet     string `json:"snippet,omitempty" schema:"max=2000"`
	// URL opens the hit in the Joplin apps.
	URL string `json:"url" schema:"max=200"`
	// Attachment is the resource whose OCR text matched, when the words
	// matched in an attachment; AttachmentSnippet is its extract.
	Attachment        string `json:"attachment,omitempty" schema:"max=32"`
	AttachmentSnippet string `json:"attachment_snippet,omitempty" schema:"max=2000"`
}

// searchOut repeats nothing of the request (type, page). Its hits are
// named results, as ChatGPT's deep research reads them (id, title, url;
// docs/chatgpt-search-fetch.md), and carry what every other client uses
// too: each hit is in the answer once (issue 35).
type searchOut struct {
	Hits    []SearchHit `json:"results" schema:"max=100"`
	HasMore bool        `json:"has_more"`
	Index   string      `json:"index,omitempty" schema:"enum=@index_state"`
	// Mode is the mode that answered, and Semantic the state of the
	// search by meaning, when one is configured or asked for.
	Mode     string `json:"mode,omitempty" schema:"enum=@search_mode"`
	Semantic string `json:"semantic,omitempty" schema:"enum=@semantic_state"`
}

// withURLs sets every hit's url (of an item of type typ).
func (r searchOut) withURLs(typ string) searchOut {
	for i := range r.Hits {
		r.Hits[i].URL = itemURL(typ, r.Hits[i].ID)
	}
	return r
}

// defaultSearchLimit is the hits one search answers by default, sized
// for an agent to read (docs/benchmarks.md, issue 25).
const defaultSearchLimit = 10

// searchModes are the values of the search mode.
var searchModes = []string{joplinindex.ModeKeyword, joplinindex.ModeSemantic, joplinindex.ModeHybrid}

// IndexStates are the values of the search result's index field: ready
// when the embedded index answered, otherwise why Joplin's search did.
var IndexStates = []string{"ready", "off", "idle", "building", "paused", "failed", "unsupported_query"}

// searchTypes maps each search type the tool accepts to the Joplin item
// type it searches and the fields it asks for. Joplin answers HTTP 500 for
// a field its table lacks: tags have neither parent_id nor deleted_time.
var searchTypes = map[string]struct{ joplinType, fields string }{
	"note":     {"note", "id,title,parent_id,deleted_time,updated_time"},
	"notebook": {"folder", "id,title,parent_id,deleted_time,updated_time"},
	"tag":      {"tag", "id,title,updated_time"},
}

// SearchTypes lists the search types the tool accepts, in schema order.
var SearchTypes = []string{"note", "notebook", "tag"}

func (o *Ops) search() registry.Operation {
	desc := "Ranked search of notes (trashed excluded unless asked): by words, and by meaning when an embedding provider is configured; or of notebook and tag titles. Hits (results) name an attachment whose OCR text matched, and each has a joplin:// url."
	return registry.Define(o.meta("search", "Search notes by words or meaning", desc, registry.EffectRead), func(ctx context.Context, in searchIn) (searchOut, error) {
		if in.Type == "" {
			in.Type = "note"
		}
		if in.Limit == 0 {
			in.Limit = defaultSearchLimit
		}
		if in.Page == 0 {
			in.Page = 1
		}
		if in.Type == "note" {
			res, ok, err := o.searchIndex(ctx, in)
			if ok || err != nil {
				return res.withURLs(in.Type), err
			}
			out, err := o.joplinSearch(ctx, in)
			out.Index = res.Index
			if res.Mode != "" { // Joplin's search is by keywords
				out.Mode, out.Semantic = joplinindex.ModeKeyword, res.Semantic
			}
			return out.withURLs(in.Type), err
		}
		out, err := o.joplinSearch(ctx, in)
		return out.withURLs(in.Type), err
	})
}

// searchIndex answers a note search from the embedded index; ok is false
// when Joplin's search must answer (res.Index then says why).
func (o *Ops) searchIndex(ctx context.Context, in searchIn) (res searchOut, ok bool, err error) {
	if o.index == nil {
		return searchOut{Index: "off"}, false, nil
	}
	opts := searchindex.Options{Limit: in.Limit, Offset: (in.Page - 1) * in.Limit, IncludeTrashed: in.IncludeTrashed}
	if scopeview.Limited(ctx) {
		if o.view == nil {
			return searchOut{Index: "off"}, false, nil
		}
		sc, err := o.view.Of(ctx)
		if err != nil {
			return searchOut{}, false, err
		}
		opts.OnlyNotebooks, opts.Notebooks = true, sc.Readable.IDs()
	}
	mode := in.Mode
	if mode == "" && o.index.MeaningReady() {
		mode = joplinindex.ModeHybrid
	}
	var hits []searchindex.Hit
	var state string
	if mode == "" || mode == joplinindex.ModeKeyword {
		hits, state, ok, err = o.index.Search(ctx, in.Query, opts)
		if o.index.MeaningStatus().State != joplinindex.MeaningOff || mode != "" {
			res.Mode = joplinindex.ModeKeyword
		}
	} else {
		var r joplinindex.MeaningResult
		r, err = o.index.SearchByMeaning(ctx, in.Query, opts, mode)
		hits, state, ok, res.Mode, res.Semantic = r.Hits, r.State, r.OK, r.Mode, r.Semantic
	}
	if err != nil || !ok {
		return searchOut{Index: state, Mode: res.Mode, Semantic: res.Semantic}, false, err
	}
	res = searchOut{Hits: make([]SearchHit, 0, len(hits)), Index: state, Mode: res.Mode, Semantic: res.Semantic}
	for i, h := range hits {
		if i == in.Limit {
			res.HasMore = true
			break
		}
		res.Hits = append(res.Hits, SearchHit{ID: h.ID, Title: h.Title, NotebookID: h.ParentID, Trashed: h.Deleted > 0, UpdatedTime: h.Updated, Snippet: h.Snippet,
			Attachment: h.Attachment, AttachmentSnippet: h.AttachmentSnippet})
	}
	servedFromIndex(ctx, res.Hits)
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
			UpdatedTime int64  `json:"updated_time"`
		} `json:"items"`
		HasMore bool `json:"has_more"`
	}
	if err := o.c.Get(ctx, "/search", q, &page); err != nil {
		return searchOut{}, err
	}
	res := searchOut{Hits: make([]SearchHit, 0, len(page.Items)), HasMore: page.HasMore}
	for _, it := range page.Items {
		h := SearchHit{ID: it.ID, Title: it.Title, Trashed: it.DeletedTime > 0, UpdatedTime: it.UpdatedTime}
		if in.Type != "tag" {
			h.NotebookID = it.ParentID
		}
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}
