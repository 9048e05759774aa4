package joplinfake

import (
	"net/http"
	"reflect"
	"testing"
)

func TestTagTitles(t *testing.T) {
	c := newClient(t)
	tag := c.ok(http.MethodPost, "/tags", nil, map[string]any{"title": "  Work "})
	id := tag["id"].(string)
	if tag["title"] != "Work" || num(tag["type_"]) != 5 || !hex32.MatchString(id) {
		t.Fatalf("POST answer %v", tag)
	}
	text := c.call(http.MethodPost, "/tags", nil, map[string]any{"title": "WORK"}).
		expectError(t, 500, `Internal Server Error: The tag "work" already exists. Please choose a different name.`)
	if text == "" {
		t.Fatal("empty error")
	}
	other := c.ok(http.MethodPost, "/tags", nil, map[string]any{"title": "home"})["id"].(string)
	c.call(http.MethodPut, "/tags/"+other, nil, map[string]any{"title": "Work"}).
		expectError(t, 500, `The tag "work" already exists`)
	// Renaming a tag to itself in another case is fine.
	if got := c.ok(http.MethodPut, "/tags/"+id, nil, map[string]any{"title": "WoRk"}); got["title"] != "WoRk" {
		t.Fatalf("PUT %v", got)
	}
	got := c.ok(http.MethodGet, "/tags/"+id, nil, nil)
	if !reflect.DeepEqual(got, map[string]any{"id": id, "parent_id": "", "title": "WoRk", "type_": float64(5)}) {
		t.Fatalf("GET %v", got)
	}
	items, _ := c.list("/tags", qs("order_by", "title", "order_dir", "DESC"))
	if len(items) != 2 || !reflect.DeepEqual(items[0], map[string]any{"id": id, "parent_id": "", "title": "WoRk"}) {
		t.Fatalf("list %v", items)
	}
	dup := newID()
	c.ok(http.MethodPost, "/tags", nil, map[string]any{"id": dup, "title": "x"})
	c.call(http.MethodPost, "/tags", nil, map[string]any{"id": dup, "title": "y"}).
		expectError(t, 500, "SQLITE_CONSTRAINT: UNIQUE constraint failed: tags.id")
}

func TestTagDeleteIsPermanent(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	n := c.note(f, "n", "")
	id := c.ok(http.MethodPost, "/tags", nil, map[string]any{"title": "t"})["id"].(string)
	c.ok(http.MethodPost, "/tags/"+id+"/notes", nil, map[string]any{"id": n})
	if r := c.call(http.MethodDelete, "/tags/"+id, nil, nil); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("DELETE %d %s", r.status, r.body)
	}
	c.call(http.MethodGet, "/tags/"+id, nil, nil).expectError(t, 404, "Not Found")
	c.call(http.MethodDelete, "/tags/"+id, nil, nil).expectError(t, 404, "Not Found")
	if items, _ := c.list("/notes/"+n+"/tags", nil); len(items) != 0 {
		t.Fatalf("note still tagged %v", items)
	}
}

func TestTagNoteLinks(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	n1 := c.note(f, "one", "")
	n2 := c.note(f, "two", "")
	tag := c.ok(http.MethodPost, "/tags", nil, map[string]any{"title": "t"})["id"].(string)

	nt := c.ok(http.MethodPost, "/tags/"+tag+"/notes", nil, map[string]any{"id": n1})
	if nt["note_id"] != n1 || nt["tag_id"] != tag || num(nt["type_"]) != 6 {
		t.Fatalf("note_tag %v", nt)
	}
	// Tagging twice is a no-op answered with an empty 200.
	if r := c.call(http.MethodPost, "/tags/"+tag+"/notes", nil, map[string]any{"id": n1}); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("second POST %d %q", r.status, r.body)
	}
	c.ok(http.MethodPost, "/tags/"+tag+"/notes", nil, map[string]any{"id": n2})
	items, more := c.list("/tags/"+tag+"/notes", nil)
	if more || !reflect.DeepEqual(ids(items), []string{n1, n2}) {
		t.Fatalf("tag notes %v", ids(items))
	}
	if items[0]["title"] != "one" || items[0]["parent_id"] != f {
		t.Fatalf("default fields %v", items[0])
	}
	if items, _ := c.list("/notes/"+n1+"/tags", nil); !reflect.DeepEqual(ids(items), []string{tag}) {
		t.Fatalf("note tags %v", items)
	}
	// Trashed notes keep their tags and are still listed.
	c.call(http.MethodDelete, "/notes/"+n2, nil, nil)
	if items, _ := c.list("/tags/"+tag+"/notes", nil); len(items) != 2 {
		t.Fatalf("after trash %v", ids(items))
	}
	if r := c.call(http.MethodDelete, "/tags/"+tag+"/notes/"+n1, nil, nil); r.status != 200 {
		t.Fatalf("untag %d %s", r.status, r.body)
	}
	if items, _ := c.list("/tags/"+tag+"/notes", nil); !reflect.DeepEqual(ids(items), []string{n2}) {
		t.Fatalf("after untag %v", ids(items))
	}

	c.call(http.MethodPost, "/tags/"+tag+"/notes", nil, map[string]any{}).expectError(t, 400, "Missing note ID")
	c.call(http.MethodPost, "/tags/"+tag+"/notes", nil, "null").expectError(t, 400, "Missing note ID")
	c.call(http.MethodDelete, "/tags/"+tag+"/notes", nil, nil).expectError(t, 400, "Missing note ID")
	c.call(http.MethodGet, "/tags/"+newID()+"/notes", nil, nil).expectError(t, 404, "Not Found")
	c.call(http.MethodPost, "/tags/"+newID()+"/notes", nil, map[string]any{"id": n1}).expectError(t, 404, "Not Found")
	// Joplin does not check that the note exists.
	c.ok(http.MethodPost, "/tags/"+tag+"/notes", nil, map[string]any{"id": newID()})
	if items, _ := c.list("/tags/"+tag+"/notes", nil); len(items) != 1 {
		t.Fatalf("ghost note listed %v", items)
	}
	// A missing note simply has no tags.
	if items, _ := c.list("/notes/"+newID()+"/tags", nil); len(items) != 0 {
		t.Fatalf("ghost note tags %v", items)
	}
}

func TestPermanentNoteDeleteDropsTags(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	n := c.ok(http.MethodPost, "/notes", nil, map[string]any{"parent_id": f, "tags": "a"})["id"].(string)
	tag := c.ok(http.MethodGet, "/tags", nil, nil)["items"].([]any)[0].(map[string]any)["id"].(string)
	c.call(http.MethodDelete, "/notes/"+n, qs("permanent", "1"), nil)
	if items, _ := c.list("/tags/"+tag+"/notes", nil); len(items) != 0 {
		t.Fatalf("deleted note still tagged %v", items)
	}
}
