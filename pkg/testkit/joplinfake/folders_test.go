package joplinfake

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"testing"
)

func TestFolderCRUD(t *testing.T) {
	c := newClient(t)
	f := c.ok(http.MethodPost, "/folders", nil, map[string]any{"title": "//Projects", "user_updated_time": 5})
	id := f["id"].(string)
	if f["title"] != "Projects" || f["parent_id"] != "" || num(f["type_"]) != 2 || num(f["deleted_time"]) != 0 {
		t.Fatalf("POST answer %v", f)
	}
	if num(f["user_updated_time"]) == 5 || num(f["created_time"]) != num(f["updated_time"]) {
		t.Fatalf("timestamps %v", f)
	}
	got := c.ok(http.MethodGet, "/folders/"+id, nil, nil)
	if !reflect.DeepEqual(got, map[string]any{"id": id, "parent_id": "", "title": "Projects", "type_": float64(2)}) {
		t.Fatalf("GET %v", got)
	}
	child := c.folder("Child", id)
	upd := c.ok(http.MethodPut, "/folders/"+child, nil, map[string]any{"title": "Renamed", "parent_id": ""})
	if upd["title"] != "Renamed" || upd["parent_id"] != "" || upd["id"] != child {
		t.Fatalf("PUT %v", upd)
	}
	c.call(http.MethodPut, "/folders/"+newID(), nil, map[string]any{"title": "x"}).expectError(t, 404, "Not Found")
	c.call(http.MethodPut, "/folders/"+id, nil, map[string]any{"parent_id": id}).
		expectError(t, 500, "Parent ID cannot be the same as ID")
	c.call(http.MethodPost, "/folders", nil, map[string]any{"title": "Conflicts"}).
		expectError(t, 500, `Notebooks cannot be named "Conflicts"`)
	dup := newID()
	c.ok(http.MethodPost, "/folders", nil, map[string]any{"id": dup})
	c.call(http.MethodPost, "/folders", nil, map[string]any{"id": dup}).
		expectError(t, 500, "UNIQUE constraint failed: folders.id")
	c.call(http.MethodPut, "/folders", nil, map[string]any{}).expectError(t, 405, "Method Not Allowed")
}

func TestFolderTrashIsRecursiveRestoreIsNot(t *testing.T) {
	c := newClient(t)
	a := c.folder("A", "")
	b := c.folder("B", a)
	other := c.folder("Other", "")
	n1 := c.note(a, "n1", "")
	n2 := c.note(b, "n2", "")
	keep := c.note(other, "keep", "")

	c.call(http.MethodDelete, "/folders/"+a, nil, nil)
	if items, _ := c.list("/folders", nil); !reflect.DeepEqual(ids(items), []string{other}) {
		t.Fatalf("folders after trash %v", ids(items))
	}
	if items, _ := c.list("/notes", nil); !reflect.DeepEqual(ids(items), []string{keep}) {
		t.Fatalf("notes after trash %v", ids(items))
	}
	for _, id := range []string{a, b} {
		f := c.ok(http.MethodGet, "/folders/"+id, qs("fields", "id,deleted_time"), nil)
		if num(f["deleted_time"]) <= 0 {
			t.Fatalf("folder %s not trashed: %v", id, f)
		}
	}
	for _, id := range []string{n1, n2} {
		if n := c.ok(http.MethodGet, "/notes/"+id, qs("fields", "deleted_time"), nil); num(n["deleted_time"]) <= 0 {
			t.Fatalf("note %s not trashed", id)
		}
	}

	c.ok(http.MethodPut, "/folders/"+a, nil, map[string]any{"deleted_time": 0})
	if items, _ := c.list("/folders", nil); len(items) != 2 {
		t.Fatalf("folders after restore %v", ids(items))
	}
	if f := c.ok(http.MethodGet, "/folders/"+b, qs("fields", "deleted_time"), nil); num(f["deleted_time"]) <= 0 {
		t.Fatal("sub-folder restored too")
	}
	if items, _ := c.list("/folders/"+a+"/notes", nil); len(items) != 0 {
		t.Fatalf("notes restored too: %v", items)
	}
}

func TestFolderPermanentDelete(t *testing.T) {
	c := newClient(t)
	a := c.folder("A", "")
	b := c.folder("B", a)
	live := c.note(b, "live", "")
	trashed := c.note(a, "trashed", "")
	c.call(http.MethodDelete, "/notes/"+trashed, nil, nil)

	if r := c.call(http.MethodDelete, "/folders/"+a, qs("permanent", "1"), nil); r.status != 200 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	for _, p := range []string{"/folders/" + a, "/folders/" + b, "/notes/" + live} {
		c.call(http.MethodGet, p, nil, nil).expectError(t, 404, "Not Found")
	}
	// Joplin only deletes children that are not already in the trash.
	c.ok(http.MethodGet, "/notes/"+trashed, nil, nil)
	if r := c.call(http.MethodDelete, "/folders/"+newID(), nil, nil); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("DELETE missing folder: %d %q", r.status, r.body)
	}
}

func TestFolderNotesAndAsTree(t *testing.T) {
	c := newClient(t)
	a := c.folder("a-root", "")
	b := c.folder("B-child", a)
	z := c.folder("Z-root", "")
	n := c.note(a, "in a", "")
	c.note(b, "in b", "")
	items, more := c.list("/folders/"+a+"/notes", nil)
	if more || !reflect.DeepEqual(ids(items), []string{n}) {
		t.Fatalf("folder notes %v", items)
	}
	c.call(http.MethodGet, "/folders/"+newID()+"/notes", nil, nil).
		expectError(t, 500, "Cannot read properties of null")

	r := c.call(http.MethodGet, "/folders", qs("as_tree", "1"), nil)
	var tree []map[string]any
	if err := json.Unmarshal(r.body, &tree); err != nil {
		t.Fatalf("as_tree: %s", r.body)
	}
	if len(tree) != 2 || tree[0]["id"] != a || tree[1]["id"] != z {
		t.Fatalf("roots %v", tree)
	}
	children, _ := tree[0]["children"].([]any)
	if len(children) != 1 || children[0].(map[string]any)["id"] != b {
		t.Fatalf("children %v", tree[0])
	}
	if _, ok := tree[1]["children"]; ok {
		t.Fatal("leaf has children")
	}
}

func TestPagination(t *testing.T) {
	c := newClient(t)
	var all []string
	for _, title := range []string{"d", "B", "a", "C"} {
		all = append(all, c.folder(title, ""))
	}
	// Default order: updated_time ASC, i.e. creation order here.
	items, more := c.list("/folders", qs("limit", "2"))
	if !more || !reflect.DeepEqual(ids(items), all[:2]) {
		t.Fatalf("page 1 %v %v", ids(items), more)
	}
	items, more = c.list("/folders", qs("limit", "2", "page", "2"))
	if !more || !reflect.DeepEqual(ids(items), all[2:]) {
		t.Fatalf("page 2 (exactly full, so has_more) %v %v", ids(items), more)
	}
	items, more = c.list("/folders", qs("limit", "2", "page", "3"))
	if more || len(items) != 0 {
		t.Fatalf("page 3 %v %v", items, more)
	}
	items, more = c.list("/folders", qs("limit", "3", "page", "2"))
	if more || len(items) != 1 {
		t.Fatalf("short last page %v %v", items, more)
	}

	titles := func(items []map[string]any) []string {
		var out []string
		for _, it := range items {
			out = append(out, it["title"].(string))
		}
		return out
	}
	items, _ = c.list("/folders", qs("order_by", "title"))
	if got := titles(items); !reflect.DeepEqual(got, []string{"a", "B", "C", "d"}) {
		t.Fatalf("title ASC (no case) %v", got)
	}
	items, _ = c.list("/folders", qs("order_by", "title", "order_dir", "DESC", "fields", "title"))
	if got := titles(items); !reflect.DeepEqual(got, []string{"d", "C", "B", "a"}) {
		t.Fatalf("title DESC %v", got)
	}
	if _, ok := items[0]["id"]; ok {
		t.Fatal("fields=title returned id")
	}
	c.call(http.MethodGet, "/folders", qs("limit", "101"), nil).expectError(t, 400, "Limit out of bond: 101")
	c.call(http.MethodGet, "/folders", qs("order_by", "nope"), nil).expectError(t, 500, "no such column: nope")
	c.call(http.MethodGet, "/folders", qs("order_dir", "UP"), nil).expectError(t, 500, "syntax error")
	c.call(http.MethodGet, "/folders", qs("fields", "id,nope"), nil).expectError(t, 500, "no such column: nope")
}

func TestDefaultLimitIs100(t *testing.T) {
	c := newClient(t)
	for i := 0; i < 103; i++ {
		c.folder("f", "")
	}
	items, more := c.list("/folders", nil)
	if len(items) != 100 || !more {
		t.Fatalf("page 1: %d %v", len(items), more)
	}
	items2, more := c.list("/folders", qs("page", "2"))
	if len(items2) != 3 || more {
		t.Fatalf("page 2: %d %v", len(items2), more)
	}
	seen := append(ids(items), ids(items2)...)
	sort.Strings(seen)
	for i := 1; i < len(seen); i++ {
		if seen[i] == seen[i-1] {
			t.Fatal("an item came back twice")
		}
	}
}
