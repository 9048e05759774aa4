package scenarios

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

type searchHit struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	NotebookID string `json:"notebook_id"`
	Trashed    bool   `json:"trashed"`
	URL        string `json:"url"`
}

// searchRes is a search answer: its hits are named results, as
// ChatGPT's search convention has them (id, title, url), and nothing
// else lists them again.
type searchRes struct {
	Items []searchHit `json:"results"`
	Extra []any       `json:"items"`
}

func hitByID(res searchRes, id string) *searchHit {
	for i := range res.Items {
		if res.Items[i].ID == id {
			return &res.Items[i]
		}
	}
	return nil
}

// Search runs the search tool once for every type it accepts
// (joplinops.SearchTypes), so each type's request, fields list included,
// reaches Joplin: full-text note search, and notebook and tag title search.
// Notes come last: their reindex restarts a real Joplin, which can leave
// the seeding client a kept-alive connection the restart broke.
func Search(t *testing.T, env Env) {
	types := slices.DeleteFunc(slices.Clone(joplinops.SearchTypes), func(typ string) bool { return typ == "note" })
	types = append(types, "note")
	for _, typ := range types {
		t.Run(typ, func(t *testing.T) {
			switch typ {
			case "note":
				searchNotes(t, env)
			case "notebook":
				searchNotebooks(t, env)
			case "tag":
				searchTags(t, env)
			default:
				t.Fatalf("search type %q has no scenario", typ)
			}
		})
	}
}

// searchNotes finds a note by a word of its body once the index saw it.
func searchNotes(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Searchable"), "")
	word := "zebra" + joplin.NewID()[:10]
	var n note
	mustCall(t, env, "create_note", map[string]any{"notebook_id": nb, "title": "Findable", "body": "the " + word + " grazes"}, &n)
	env.Reindex(t)
	var res searchRes
	// Real Joplin rebuilds its index some seconds after a restart; on a
	// loaded 2-core machine that once took over 45 s, so poll generously.
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		mustCall(t, env, "search", map[string]any{"query": word}, &res)
		if len(res.Items) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(res.Items) != 1 || res.Items[0].ID != n.ID || res.Items[0].NotebookID != nb ||
		res.Items[0].Title != "Findable" || res.Items[0].Trashed {
		t.Fatalf("note search: %+v", res)
	}
	url := "joplin://x-callback-url/openNote?id=" + n.ID
	if res.Items[0].URL != url || res.Extra != nil {
		t.Fatalf("note search: the hit's url, each hit once: %+v", res)
	}
}

// searchNotebooks finds live and trashed notebooks by title, with parents.
func searchNotebooks(t *testing.T, env Env) {
	prefix := "Searchable " + joplin.NewID()[:10]
	parent := Folder(t, env, prefix+" parent", "")
	child := Folder(t, env, prefix+" child", parent)
	gone := Folder(t, env, prefix+" gone", "")
	trashDirect(t, env, "folders", gone)
	var res searchRes
	mustCall(t, env, "search", map[string]any{"query": prefix + "*", "type": "notebook", "limit": 100}, &res)
	if len(res.Items) != 3 {
		t.Fatalf("notebook search: %+v", res)
	}
	if h := hitByID(res, parent); h == nil || h.NotebookID != "" || h.Trashed {
		t.Fatalf("parent: %+v", res)
	}
	if h := hitByID(res, child); h == nil || h.NotebookID != parent || h.Trashed || h.Title != prefix+" child" {
		t.Fatalf("child: %+v", res)
	}
	if h := hitByID(res, gone); h == nil || !h.Trashed {
		t.Fatalf("trashed notebook: %+v", res)
	}
}

// searchTags finds tags by title, with a wildcard and exactly.
func searchTags(t *testing.T, env Env) {
	title := "searchable-" + joplin.NewID()[:10]
	var a, b tagOut
	mustCall(t, env, "create_tag", map[string]any{"title": title + "-one"}, &a)
	mustCall(t, env, "create_tag", map[string]any{"title": title + "-two"}, &b)
	var res searchRes
	mustCall(t, env, "search", map[string]any{"query": title + "*", "type": "tag"}, &res)
	if len(res.Items) != 2 || hitByID(res, a.ID) == nil || hitByID(res, b.ID) == nil {
		t.Fatalf("tag search: %+v", res)
	}
	for _, h := range res.Items {
		if h.NotebookID != "" || h.Trashed || !strings.HasPrefix(h.Title, title) {
			t.Fatalf("tag hit: %+v", h)
		}
	}
	mustCall(t, env, "search", map[string]any{"query": title + "-two", "type": "tag"}, &res)
	if len(res.Items) != 1 || res.Items[0].ID != b.ID {
		t.Fatalf("exact tag search: %+v", res)
	}
}
