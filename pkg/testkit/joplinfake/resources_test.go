package joplinfake

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func TestResourceUploadAndDownload(t *testing.T) {
	c := newClient(t)
	r := c.upload(http.MethodPost, "/resources", `{"title":"Greeting","mime":"image/gif","filename":"x.gif"}`, "hello.txt", []byte("hello world"))
	if r.status != 200 {
		t.Fatalf("POST %d %s", r.status, r.body)
	}
	res := r.object(t)
	id := res["id"].(string)
	// Only title (and id) come from props; the rest is derived from the file.
	if !hex32.MatchString(id) || res["title"] != "Greeting" || res["mime"] != "text/plain" ||
		res["file_extension"] != "txt" || res["filename"] != "" || num(res["size"]) != 11 || num(res["type_"]) != 4 {
		t.Fatalf("POST answer %v", res)
	}
	got := c.ok(http.MethodGet, "/resources/"+id, nil, nil)
	if !reflect.DeepEqual(got, map[string]any{"id": id, "title": "Greeting", "type_": float64(4)}) {
		t.Fatalf("GET %v", got)
	}
	items, _ := c.list("/resources", nil)
	if !reflect.DeepEqual(items, []map[string]any{{"id": id, "title": "Greeting"}}) {
		t.Fatalf("list %v", items)
	}
	file := c.call(http.MethodGet, "/resources/"+id+"/file", nil, nil)
	if file.status != 200 || string(file.body) != "hello world" || file.header.Get("Content-Type") != "text/plain" ||
		!strings.Contains(file.header.Get("Content-disposition"), "Greeting.txt") {
		t.Fatalf("file %d %q %v", file.status, file.body, file.header)
	}
	c.call(http.MethodGet, "/resources/"+newID()+"/file", nil, nil).expectError(t, 404, "Not Found")
}

func TestResourceDerivedProperties(t *testing.T) {
	c := newClient(t)
	// No extension: image bytes are sniffed.
	res := c.upload(http.MethodPost, "/resources", `{}`, "blob", pngBytes).object(t)
	if res["mime"] != "image/png" || res["file_extension"] != "png" {
		t.Fatalf("sniffed %v", res)
	}
	// The default title is multiparty's temporary file name.
	if title := res["title"].(string); !strings.HasSuffix(title, ".png") || len(title) != 28 {
		t.Fatalf("default title %q", title)
	}
	res = c.upload(http.MethodPost, "/resources", `{}`, "data.bin", []byte("????")).object(t)
	if res["mime"] != "application/octet-stream" || res["file_extension"] != "bin" {
		t.Fatalf("unknown type %v", res)
	}
	res = c.upload(http.MethodPost, "/resources", `{}`, "Photo.JPG", []byte("x")).object(t)
	if res["mime"] != "image/jpeg" || res["file_extension"] != "JPG" {
		t.Fatalf("upper-case extension %v", res)
	}
}

func TestResourceCreateErrors(t *testing.T) {
	c := newClient(t)
	c.upload(http.MethodPost, "/resources", `{"title":"t"}`, "", nil).
		expectError(t, 400, "Resource cannot be created without a file")
	c.call(http.MethodPost, "/resources", nil, map[string]any{"title": "json"}).
		expectError(t, 400, "Resource cannot be created without a file")
	c.upload(http.MethodPost, "/resources", "", "a.txt", []byte("x")).
		expectError(t, 500, "Unexpected end of JSON input")
	id := newID()
	if res := c.upload(http.MethodPost, "/resources", `{"id":"`+id+`"}`, "a.txt", []byte("x")).object(t); res["id"] != id {
		t.Fatalf("client id %v", res)
	}
	c.upload(http.MethodPost, "/resources", `{"id":"`+id+`"}`, "a.txt", []byte("x")).
		expectError(t, 500, "UNIQUE constraint failed: resources.id")
	c.upload(http.MethodPost, "/resources", `{"id":"short"}`, "a.txt", []byte("x")).
		expectError(t, 500, "Validation error: ID must a 32-characters")
}

func TestResourceUpdateAndDelete(t *testing.T) {
	c := newClient(t)
	id := c.upload(http.MethodPost, "/resources", `{"title":"Doc"}`, "a.txt", []byte("v1")).object(t)["id"].(string)

	// JSON PUT changes properties only.
	got := c.ok(http.MethodPut, "/resources/"+id, nil, map[string]any{"title": "Renamed", "mime": "text/x-custom"})
	if got["title"] != "Renamed" || got["mime"] != "text/x-custom" || num(got["size"]) != 2 {
		t.Fatalf("JSON PUT %v", got)
	}
	// Multipart PUT replaces the blob, re-derives mime and keeps the title.
	r := c.upload(http.MethodPut, "/resources/"+id, `{}`, "pic.png", pngBytes)
	got = r.object(t)
	if r.status != 200 || got["title"] != "Renamed" || got["mime"] != "image/png" || num(got["size"]) != int64(len(pngBytes)) {
		t.Fatalf("multipart PUT %d %v", r.status, got)
	}
	if file := c.call(http.MethodGet, "/resources/"+id+"/file", nil, nil); string(file.body) != string(pngBytes) {
		t.Fatalf("blob %q", file.body)
	}
	c.upload(http.MethodPut, "/resources", `{}`, "a.txt", []byte("x")).expectError(t, 400, "Missing resource ID")
	c.call(http.MethodPut, "/resources/"+newID(), nil, map[string]any{"title": "x"}).expectError(t, 404, "Not Found")

	if r := c.call(http.MethodDelete, "/resources/"+id, nil, nil); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("DELETE %d %s", r.status, r.body)
	}
	c.call(http.MethodGet, "/resources/"+id, nil, nil).expectError(t, 404, "Not Found")
	c.call(http.MethodGet, "/resources/"+id+"/file", nil, nil).expectError(t, 404, "Not Found")
	c.call(http.MethodDelete, "/resources/"+id, nil, nil).expectError(t, 404, "Not Found")
}

func TestResourceNoteLinks(t *testing.T) {
	c := newClient(t)
	f := c.folder("F", "")
	r1 := c.upload(http.MethodPost, "/resources", `{"title":"one"}`, "1.txt", []byte("1")).object(t)["id"].(string)
	r2 := c.upload(http.MethodPost, "/resources", `{"title":"two"}`, "2.png", pngBytes).object(t)["id"].(string)
	other := c.note(f, "plain", "")
	body := "see [one](:/" + r1 + ") and ![two](:/" + r2 + ") and again :/" + r1 + " and a note link [x](:/" + other + ") and :/" + newID()
	n := c.note(f, "with links", body)
	c.note(f, "unrelated", "nothing here")

	items, more := c.list("/notes/"+n+"/resources", nil)
	if more || !reflect.DeepEqual(ids(items), []string{r1, r2}) {
		t.Fatalf("note resources %v", items)
	}
	if !reflect.DeepEqual(items[0], map[string]any{"id": r1, "title": "one"}) {
		t.Fatalf("default fields %v", items[0])
	}
	items, _ = c.list("/notes/"+n+"/resources", qs("fields", "id,mime"))
	if items[1]["mime"] != "image/png" {
		t.Fatalf("fields %v", items)
	}
	c.call(http.MethodGet, "/notes/"+newID()+"/resources", nil, nil).expectError(t, 404, "Not Found")

	items, _ = c.list("/resources/"+r2+"/notes", nil)
	if !reflect.DeepEqual(ids(items), []string{n}) {
		t.Fatalf("resource notes %v", items)
	}
	// Trashed notes still count as linked.
	c.call(http.MethodDelete, "/notes/"+n, nil, nil)
	if items, _ := c.list("/resources/"+r1+"/notes", nil); len(items) != 1 {
		t.Fatalf("after trash %v", items)
	}
	if items, _ := c.list("/resources/"+newID()+"/notes", nil); len(items) != 0 {
		t.Fatalf("missing resource %v", items)
	}
}
