package joplinfake

import (
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestCreateNoteNeedsAFolder(t *testing.T) {
	c := newClient(t)
	text := c.call(http.MethodPost, "/notes", nil, map[string]any{"title": "orphan"}).
		expectError(t, 500, "Internal Server Error: Cannot find folder for note")
	if !strings.Contains(text, "/usr/lib/node_modules/joplin/") {
		t.Fatalf("no local path in %q", text)
	}
	if items, _ := c.list("/notes", nil); len(items) != 0 {
		t.Fatal("note created")
	}
}

func TestCreateNoteFolderChoice(t *testing.T) {
	c := newClient(t)
	older := c.folder("Older", "")
	newer := c.folder("Newer", "")
	// Without parent_id the note goes to the most recently created notebook.
	n := c.ok(http.MethodPost, "/notes", nil, map[string]any{"title": "t"})
	if n["parent_id"] != newer {
		t.Fatalf("parent %v, want %s", n["parent_id"], newer)
	}
	// Trashed notebooks are not candidates.
	c.call(http.MethodDelete, "/folders/"+newer, nil, nil)
	if n := c.ok(http.MethodPost, "/notes", nil, map[string]any{"title": "t"}); n["parent_id"] != older {
		t.Fatalf("parent %v, want %s", n["parent_id"], older)
	}
	// Joplin does not check that parent_id exists.
	ghost := newID()
	if n := c.ok(http.MethodPost, "/notes", nil, map[string]any{"title": "t", "parent_id": ghost}); n["parent_id"] != ghost {
		t.Fatalf("parent %v", n["parent_id"])
	}
}

func TestNoteShapeAndFields(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	start := time.Now().UnixMilli()
	n := c.ok(http.MethodPost, "/notes", nil, map[string]any{"parent_id": f, "title": "Hello", "body": "World", "is_todo": 1, "source_url": "https://x"})
	id := n["id"].(string)
	if !hex32.MatchString(id) {
		t.Fatalf("id %q", id)
	}
	if num(n["type_"]) != 1 || n["body"] != "World" || num(n["is_todo"]) != 1 || n["source_url"] != "https://x" ||
		num(n["deleted_time"]) != 0 || num(n["markup_language"]) != 1 {
		t.Fatalf("POST answer %v", n)
	}
	ct := num(n["created_time"])
	if ct < start || ct > time.Now().UnixMilli() || num(n["updated_time"]) != ct ||
		num(n["user_created_time"]) != ct || num(n["user_updated_time"]) != ct {
		t.Fatalf("timestamps %v", n)
	}
	// A single GET returns only the default fields plus type_.
	got := c.ok(http.MethodGet, "/notes/"+id, nil, nil)
	want := map[string]any{"id": id, "parent_id": f, "title": "Hello", "type_": float64(1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GET = %v, want %v", got, want)
	}
	got = c.ok(http.MethodGet, "/notes/"+id, qs("fields", "body,is_todo,deleted_time"), nil)
	want = map[string]any{"body": "World", "is_todo": float64(1), "deleted_time": float64(0), "type_": float64(1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GET fields = %v, want %v", got, want)
	}
	c.call(http.MethodGet, "/notes/"+id, qs("fields", "id,bogus"), nil).
		expectError(t, 500, "Internal Server Error: Error: SQLITE_ERROR: no such column: bogus")
	// Lists return the default fields without type_.
	items, more := c.list("/notes", nil)
	if more || len(items) != 1 || !reflect.DeepEqual(items[0], map[string]any{"id": id, "parent_id": f, "title": "Hello"}) {
		t.Fatalf("list %v %v", items, more)
	}
}

func TestNoteClientChosenID(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	id := newID()
	if n := c.ok(http.MethodPost, "/notes", nil, map[string]any{"id": id, "parent_id": f, "title": "a"}); n["id"] != id {
		t.Fatalf("id %v", n["id"])
	}
	c.call(http.MethodPost, "/notes", nil, map[string]any{"id": id, "parent_id": f, "title": "b"}).
		expectError(t, 500, "SQLITE_CONSTRAINT: UNIQUE constraint failed: notes.id")
	c.call(http.MethodPost, "/notes", nil, map[string]any{"id": "NOT-HEX", "parent_id": f}).
		expectError(t, 500, "Validation error: ID must a 32-characters lowercase hexadecimal string")
	// Ids are unique per item type only.
	c.ok(http.MethodPost, "/folders", nil, map[string]any{"id": id, "title": "same id"})
	c.ok(http.MethodPost, "/tags", nil, map[string]any{"id": id, "title": "same id"})
	if n := c.ok(http.MethodGet, "/notes/"+id, nil, nil); n["title"] != "a" {
		t.Fatalf("note changed: %v", n)
	}
}

func TestUpdateNote(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	g := c.folder("G", "")
	id := c.note(f, "old", "body")
	before := c.ok(http.MethodGet, "/notes/"+id, qs("fields", "created_time,updated_time,user_updated_time"), nil)
	after := c.ok(http.MethodPut, "/notes/"+id, nil, map[string]any{"title": "new", "parent_id": g, "id": newID(), "created_time": 1, "unknown": "x"})
	if after["id"] != id || after["title"] != "new" || after["parent_id"] != g || after["body"] != "body" || num(after["type_"]) != 1 {
		t.Fatalf("PUT answer %v", after)
	}
	if num(after["created_time"]) != num(before["created_time"]) || num(after["updated_time"]) <= num(before["updated_time"]) ||
		num(after["user_updated_time"]) <= num(before["user_updated_time"]) {
		t.Fatalf("timestamps before %v after %v", before, after)
	}
	if _, ok := after["unknown"]; ok {
		t.Fatal("unknown property stored")
	}
	got := c.ok(http.MethodPut, "/notes/"+id, nil, map[string]any{"user_updated_time": 1234})
	if num(got["user_updated_time"]) != 1234 {
		t.Fatalf("user_updated_time %v", got["user_updated_time"])
	}
	c.call(http.MethodPut, "/notes/"+id, nil, map[string]any{"user_created_time": "soon"}).
		expectError(t, 500, "Validation error")
	c.call(http.MethodPut, "/notes/"+newID(), nil, map[string]any{"title": "x"}).expectError(t, 404, "Not Found")
	c.call(http.MethodPut, "/notes/"+id, nil, "{not json").expectError(t, 500, "Internal Server Error: Unexpected token")
	c.call(http.MethodPost, "/notes", nil, "").expectError(t, 500, "Unexpected end of JSON input")
}

func TestTrashAndRestoreNote(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	keep := c.note(f, "keep", "")
	gone := c.note(f, "gone", "")
	r := c.call(http.MethodDelete, "/notes/"+gone, nil, nil)
	if r.status != 200 || len(r.body) != 0 {
		t.Fatalf("DELETE: %d %q", r.status, r.body)
	}
	if items, _ := c.list("/notes", nil); !reflect.DeepEqual(ids(items), []string{keep}) {
		t.Fatalf("list after trash %v", ids(items))
	}
	if items, _ := c.list("/notes", qs("include_deleted", "1")); len(items) != 2 {
		t.Fatalf("include_deleted: %v", items)
	}
	if items, _ := c.list("/folders/"+f+"/notes", nil); len(items) != 1 {
		t.Fatalf("folder notes: %v", items)
	}
	n := c.ok(http.MethodGet, "/notes/"+gone, qs("fields", "id,deleted_time"), nil)
	if num(n["deleted_time"]) <= 0 {
		t.Fatalf("trashed note %v", n)
	}
	c.ok(http.MethodPut, "/notes/"+gone, nil, map[string]any{"deleted_time": 0})
	if items, _ := c.list("/notes", nil); len(items) != 2 {
		t.Fatalf("after restore %v", items)
	}
	c.call(http.MethodDelete, "/notes/"+gone, qs("permanent", "1"), nil)
	c.call(http.MethodGet, "/notes/"+gone, nil, nil).expectError(t, 404, "Not Found")
	// Deleting what does not exist still answers 200.
	for _, q := range []map[string][]string{nil, qs("permanent", "1")} {
		if r := c.call(http.MethodDelete, "/notes/"+newID(), q, nil); r.status != 200 {
			t.Fatalf("DELETE missing: %d %s", r.status, r.body)
		}
	}
}

func noteTagTitles(t *testing.T, c *client, noteID string) []string {
	t.Helper()
	items, _ := c.list("/notes/"+noteID+"/tags", nil)
	var out []string
	for _, it := range items {
		out = append(out, it["title"].(string))
	}
	sort.Strings(out)
	return out
}

func TestNoteTagsProperty(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	n := c.ok(http.MethodPost, "/notes", nil, map[string]any{"parent_id": f, "title": "t", "tags": " Alpha ,beta,"})
	id := n["id"].(string)
	if got := noteTagTitles(t, c, id); !reflect.DeepEqual(got, []string{"alpha", "beta"}) {
		t.Fatalf("tags after POST %v", got)
	}
	c.ok(http.MethodPut, "/notes/"+id, nil, map[string]any{"tags": "beta,GAMMA"})
	if got := noteTagTitles(t, c, id); !reflect.DeepEqual(got, []string{"beta", "gamma"}) {
		t.Fatalf("tags after PUT %v", got)
	}
	// PUT without "tags" leaves them; an empty string clears them.
	c.ok(http.MethodPut, "/notes/"+id, nil, map[string]any{"title": "u"})
	if got := noteTagTitles(t, c, id); len(got) != 2 {
		t.Fatalf("tags after title PUT %v", got)
	}
	c.ok(http.MethodPut, "/notes/"+id, nil, map[string]any{"tags": ""})
	if got := noteTagTitles(t, c, id); len(got) != 0 {
		t.Fatalf("tags after clearing %v", got)
	}
	// The tags themselves survive.
	if items, _ := c.list("/tags", nil); len(items) != 3 {
		t.Fatalf("tags %v", items)
	}
}

func TestNotePostIgnoresPathAndExtraFields(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	n := c.ok(http.MethodPost, "/notes/whatever", nil, map[string]any{"parent_id": f, "deleted_time": 5, "order": 3, "created_time": 7})
	if num(n["deleted_time"]) != 0 || num(n["created_time"]) == 7 || n["title"] != "" {
		t.Fatalf("POST answer %v", n)
	}
}
