package joplinfake

import (
	"net/http"
	"reflect"
	"sort"
	"testing"
)

func (c *client) search(query string, extra ...string) []string {
	c.t.Helper()
	items, _ := c.list("/search", qs(append([]string{"query", query}, extra...)...))
	out := ids(items)
	sort.Strings(out)
	return out
}

func sorted(ids ...string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

func TestSearchSeesOnlyTheIndexSnapshot(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	n := c.note(f, "Quarterly report", "numbers")
	if got := c.search("quarterly"); len(got) != 0 {
		t.Fatalf("found before any reindex: %v", got)
	}
	c.fake.ReindexSearch()
	if got := c.search("quarterly"); !reflect.DeepEqual(got, []string{n}) {
		t.Fatalf("after reindex %v", got)
	}
	// Edits after the snapshot: the old text still matches, the new does
	// not, and the current note comes back.
	c.ok(http.MethodPut, "/notes/"+n, nil, map[string]any{"title": "Annual summary"})
	if got := c.search("annual"); len(got) != 0 {
		t.Fatalf("new text found %v", got)
	}
	items, _ := c.list("/search", qs("query", "quarterly"))
	if len(items) != 1 || items[0]["title"] != "Annual summary" {
		t.Fatalf("old text %v", items)
	}
	later := c.note(f, "Quarterly plan", "")
	if got := c.search("quarterly"); !reflect.DeepEqual(got, []string{n}) {
		t.Fatalf("note created after snapshot found: %v", got)
	}
	// Trashed and deleted notes are skipped even though indexed.
	c.fake.ReindexSearch()
	c.call(http.MethodDelete, "/notes/"+n, nil, nil)
	if got := c.search("quarterly"); !reflect.DeepEqual(got, []string{later}) {
		t.Fatalf("after trash %v", got)
	}
	c.call(http.MethodDelete, "/notes/"+later, qs("permanent", "1"), nil)
	if got := c.search("quarterly"); len(got) != 0 {
		t.Fatalf("after delete %v", got)
	}
}

func TestSearchQueries(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	apple := c.note(f, "Apple pie", "Bake with cinnamon and sugar.")
	banana := c.note(f, "Banana bread", "Bake with sugar; no cinnamon.")
	cherry := c.note(f, "Cherry notes", "apple-cherry crumble")
	c.fake.ReindexSearch()
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"apple", sorted(apple, cherry)},
		{"APPLE", sorted(apple, cherry)},
		{"app", sorted(apple, cherry)},        // terms match as word prefixes
		{"ple", nil},                          // but not inside words
		{"bake sugar", sorted(apple, banana)}, // all terms must match
		{"bake -banana", []string{apple}},     // "-" excludes
		{"title:apple", []string{apple}},      // title only
		{"body:apple", []string{cherry}},      // body only
		{`"sugar no"`, []string{banana}},      // phrase
		{`"no sugar"`, nil},                   // phrase order matters
		{"cinn*", sorted(apple, banana)},      // explicit wildcard
		{"c*mon", sorted(apple, banana)},      // wildcard inside a word
		{"*", nil},                            // match-all is disabled
		{"-apple", nil},                       // negation alone finds nothing
		{"zebra", nil},
	} {
		if got := c.search(tc.query); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("search %q = %v, want %v", tc.query, got, tc.want)
		}
	}
	// Default fields, title hits ranked first, fields= honoured.
	items, more := c.list("/search", qs("query", "apple"))
	if more || len(items) != 2 || items[0]["id"] != apple || !reflect.DeepEqual(items[0], map[string]any{"id": apple, "parent_id": f, "title": "Apple pie"}) {
		t.Fatalf("items %v", items)
	}
	items, _ = c.list("/search", qs("query", "apple", "type", "note", "fields", "id,body"))
	if items[0]["body"] == nil || items[0]["title"] != nil {
		t.Fatalf("fields %v", items)
	}
	items, _ = c.list("/search", qs("query", "bake", "order_by", "title", "order_dir", "DESC", "fields", "id,title"))
	if !reflect.DeepEqual(ids(items), []string{banana, apple}) {
		t.Fatalf("order_by %v", ids(items))
	}
	c.call(http.MethodGet, "/search", nil, nil).expectError(t, 400, `Missing "query" parameter`)
	c.call(http.MethodGet, "/search", qs("query", "x", "type", "setting"), nil).expectError(t, 500, "Internal Server Error")
	c.call(http.MethodGet, "/search", qs("query", "x", "fields", "nope"), nil).expectError(t, 500, "no such column: nope")
	c.call(http.MethodPost, "/search", qs("query", "x"), "").expectError(t, 405, "Method Not Allowed")
}

func TestSearchPagination(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	for i := 0; i < 5; i++ {
		c.note(f, "match", "")
	}
	c.fake.ReindexSearch()
	items, more := c.list("/search", qs("query", "match", "limit", "2", "page", "3"))
	if len(items) != 1 || more {
		t.Fatalf("last page %d %v", len(items), more)
	}
	items, more = c.list("/search", qs("query", "match", "limit", "5"))
	if len(items) != 5 || !more {
		t.Fatalf("exactly full page %d %v", len(items), more)
	}
	c.call(http.MethodGet, "/search", qs("query", "match", "limit", "500"), nil).expectError(t, 400, "Limit out of bond")
}

func TestSearchTitlesOfOtherTypes(t *testing.T) {
	c := newClient(t)
	work := c.folder("Work", "")
	sub := c.folder("Workshop", work)
	home := c.folder("Home", "")
	c.call(http.MethodDelete, "/folders/"+work, nil, nil)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"work", []string{work}}, // LIKE without wildcards is a whole-title match
		{"WORK", []string{work}},
		{"Work*", sorted(work, sub)},
		{"*o*", sorted(work, sub, home)},
		{"or", nil},
		{"H_me", []string{home}},
	} {
		if got := c.search(tc.query, "type", "folder"); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("folder search %q = %v, want %v", tc.query, got, tc.want)
		}
	}
	// Trashed folders are found, with deleted_time when asked for.
	items, _ := c.list("/search", qs("query", "work", "type", "folder", "fields", "id,title,deleted_time"))
	if len(items) != 1 || num(items[0]["deleted_time"]) <= 0 {
		t.Fatalf("trashed folder %v", items)
	}
	// Unordered folder search comes back in creation order, like GET /folders.
	c.ok(http.MethodPut, "/folders/"+work, nil, map[string]any{"deleted_time": 0})
	items, _ = c.list("/search", qs("query", "*", "type", "folder"))
	if !reflect.DeepEqual(ids(items), []string{work, sub, home}) {
		t.Fatalf("order %v", ids(items))
	}

	tag := c.ok(http.MethodPost, "/tags", nil, map[string]any{"title": "Urgent"})["id"].(string)
	if got := c.search("URGENT", "type", "tag"); !reflect.DeepEqual(got, []string{tag}) {
		t.Fatalf("tag search %v", got)
	}
	res := c.upload(http.MethodPost, "/resources", `{"title":"scan.pdf"}`, "scan.pdf", []byte("%PDF")).object(t)["id"].(string)
	if got := c.search("scan*", "type", "resource"); !reflect.DeepEqual(got, []string{res}) {
		t.Fatalf("resource search %v", got)
	}
	if items, more := c.list("/search", qs("query", "*", "type", "master_key")); len(items) != 0 || more {
		t.Fatalf("master_key %v", items)
	}
}
