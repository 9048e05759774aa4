package scenarios

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

// ResourceScenarios covers the resource operations.
func ResourceScenarios(t *testing.T, env Env) {
	t.Run("binary_round_trip", func(t *testing.T) { resourceRoundTrip(t, env) })
	t.Run("mime", func(t *testing.T) { resourceMime(t, env) })
	t.Run("invalid_content", func(t *testing.T) { resourceInvalid(t, env) })
	t.Run("duplicates", func(t *testing.T) { resourceDuplicates(t, env) })
	t.Run("attach_to_note", func(t *testing.T) { resourceAttach(t, env) })
	t.Run("update", func(t *testing.T) { resourceUpdate(t, env) })
	t.Run("list", func(t *testing.T) { resourceList(t, env) })
	t.Run("delete_and_unknown", func(t *testing.T) { resourceDelete(t, env) })
}

type resourceOut struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	Mime           string `json:"mime"`
	Filename       string `json:"filename"`
	Size           int64  `json:"size"`
	CreatedTime    int64  `json:"created_time"`
	UpdatedTime    int64  `json:"updated_time"`
	SHA256         string `json:"sha256"`
	AttachedToNote string `json:"attached_to_note"`
	Notes          []struct {
		ID         string `json:"id"`
		Title      string `json:"title"`
		NotebookID string `json:"notebook_id"`
		Trashed    bool   `json:"trashed"`
	} `json:"notes"`
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// pngBytes encodes a small, real PNG image.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 8))
	for x := range 16 {
		img.Set(x, x%8, color.RGBA{R: uint8(x * 16), G: 80, B: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var pdfBytes = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

func createResource(t *testing.T, env Env, args map[string]any) resourceOut {
	t.Helper()
	var r resourceOut
	mustCall(t, env, "create_resource", args, &r)
	return r
}

// contentOf downloads a resource through the bridge and checks that the
// reported size and hash describe the bytes.
func contentOf(t *testing.T, env Env, id string) ([]byte, string) {
	t.Helper()
	var c struct {
		ID         string `json:"id"`
		Mime       string `json:"mime"`
		Size       int    `json:"size"`
		SHA256     string `json:"sha256"`
		DataBase64 string `json:"data_base64"`
	}
	mustCall(t, env, "get_resource_content", map[string]any{"id": id}, &c)
	data, err := base64.StdEncoding.DecodeString(c.DataBase64)
	if err != nil || c.ID != id || c.Size != len(data) || c.SHA256 != sha(data) {
		t.Fatalf("get_resource_content %s: size %d, sha %s for %d bytes (%v)", id, c.Size, c.SHA256, len(data), err)
	}
	return data, c.Mime
}

// rawResource reads a resource's stored metadata directly from Joplin.
func rawResource(t *testing.T, env Env, id string) map[string]any {
	t.Helper()
	var r map[string]any
	if err := env.Joplin.Get(context.Background(), "/resources/"+id,
		url.Values{"fields": {"id,title,mime,filename,file_extension,size"}}, &r); err != nil {
		t.Fatalf("read resource %s: %v", id, err)
	}
	return r
}

// countResources counts the resources whose normalized title is title's,
// reading Joplin directly.
func countResources(t *testing.T, env Env, title string) int {
	t.Helper()
	all, err := joplin.ListAll[resourceOut](context.Background(), env.Joplin, "/resources", url.Values{"fields": {"id,title"}}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range all {
		if joplinops.NormalizeTitle(r.Title) == joplinops.NormalizeTitle(title) {
			n++
		}
	}
	return n
}

func resourceRoundTrip(t *testing.T, env Env) {
	size := 300_000
	if env.MaxResponseChars > 0 {
		// Content that cannot fit the transport's response bound is
		// refused, never cut; round-trip content that fits.
		big := createResource(t, env, map[string]any{"data_base64": b64(randomBytes(t, size)), "title": unique(t, "Big blob")})
		wantErr(t, env, "get_resource_content", map[string]any{"id": big.ID}, domainerr.ResponseTooLarge)
		size = env.MaxResponseChars / 2
	}
	data := randomBytes(t, size)
	title := unique(t, "Random blob")
	r := createResource(t, env, map[string]any{"data_base64": b64(data), "title": title})
	if len(r.ID) != 32 || r.Title != title || r.Size != int64(size) || r.SHA256 != sha(data) ||
		r.Mime != "application/octet-stream" || r.AttachedToNote != "" || r.CreatedTime == 0 {
		t.Fatalf("create_resource: %+v", r)
	}
	got, mime := contentOf(t, env, r.ID)
	if !bytes.Equal(got, data) || mime != "application/octet-stream" {
		t.Fatalf("round trip changed the bytes (%d bytes, %s)", len(got), mime)
	}
	direct, err := env.Joplin.GetRaw(context.Background(), "/resources/"+r.ID+"/file")
	if err != nil || !bytes.Equal(direct, data) {
		t.Fatalf("Joplin holds other bytes: %v", err)
	}
	var meta resourceOut
	mustCall(t, env, "get_resource", map[string]any{"id": r.ID}, &meta)
	if meta.ID != r.ID || meta.Title != title || meta.Size != int64(size) || meta.Notes != nil || meta.SHA256 != "" {
		t.Fatalf("get_resource: %+v", meta)
	}
}

func resourceMime(t *testing.T, env Env) {
	for _, c := range []struct {
		name     string
		data     []byte
		args     map[string]any
		mime     string
		ext      string
		filename string
	}{
		{"pdf by filename", pdfBytes, map[string]any{"filename": "report.pdf"}, "application/pdf", "pdf", "report.pdf"},
		{"png by sniffing", pngBytes(t), map[string]any{}, "image/png", "png", ""},
		{"markdown by filename", []byte("# Plan\n\nSome *text*.\n"), map[string]any{"filename": "plan.md"}, "text/markdown", "md", "plan.md"},
		{"declared alias", randomBytes(t, 2000), map[string]any{"mime": "image/jpg"}, "image/jpeg", "jpg", ""},
		{"joplin alias fixed", randomBytes(t, 2000), map[string]any{"filename": "sound.wav"}, "audio/wav", "wav", "sound.wav"},
		{"unknown type", randomBytes(t, 2000), map[string]any{"mime": "application/x-notebridge-test", "filename": "blob.nbt"},
			"application/x-notebridge-test", "nbt", "blob.nbt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"data_base64": b64(c.data), "title": unique(t, c.name)}
			for k, v := range c.args {
				args[k] = v
			}
			r := createResource(t, env, args)
			raw := rawResource(t, env, r.ID)
			if r.Mime != c.mime || r.Filename != c.filename || raw["mime"] != c.mime || raw["file_extension"] != c.ext {
				t.Fatalf("stored %+v; Joplin has %v", r, raw)
			}
			got, mime := contentOf(t, env, r.ID)
			if !bytes.Equal(got, c.data) || mime != c.mime {
				t.Fatalf("content %d bytes, mime %s", len(got), mime)
			}
		})
	}
}

func resourceInvalid(t *testing.T, env Env) {
	title := unique(t, "Invalid")
	e := wantErr(t, env, "create_resource", map[string]any{"data_base64": b64(pdfBytes), "title": title, "mime": "image/png"}, domainerr.InvalidArgument)
	if e.Details["field"] != "mime" || e.Details["detected_mime"] != "application/pdf" {
		t.Fatalf("implausible mime: %+v", e)
	}
	e = wantErr(t, env, "create_resource", map[string]any{"data_base64": b64(pngBytes(t)), "title": title, "filename": "scan.pdf"}, domainerr.InvalidArgument)
	if e.Details["field"] != "filename" {
		t.Fatalf("implausible filename: %+v", e)
	}
	for _, bad := range []string{"@@@@not-base64@@", "QUJDRA", "QUJ=", "QUJD=RA=", "QU JD"} {
		e := wantErr(t, env, "create_resource", map[string]any{"data_base64": bad, "title": title}, domainerr.InvalidArgument)
		enc, _ := json.Marshal(e)
		if e.Details["field"] != "data_base64" || strings.Contains(string(enc), bad) || strings.Contains(string(enc), title) {
			t.Fatalf("invalid base64 %q: %s", bad, enc)
		}
	}
	// Just over the default 10 MiB bound: refused from the encoded length.
	over := joplinops.DefaultLimits.MaxResourceBytes + 1
	e = wantErr(t, env, "create_resource", map[string]any{"data_base64": b64(make([]byte, over)), "title": title}, domainerr.ResourceTooLarge)
	if size, _ := json.Marshal(e.Details["size"]); e.Retryable || string(size) != fmt.Sprint(over) {
		t.Fatalf("too large: %+v", e)
	}
	if n := countResources(t, env, title); n != 0 {
		t.Fatalf("refused creates wrote %d resources", n)
	}
}

func resourceDuplicates(t *testing.T, env Env) {
	data := randomBytes(t, 20_000)
	title := unique(t, "Scan  Receipt")
	first := createResource(t, env, map[string]any{"data_base64": b64(data), "title": title})
	for _, variant := range []string{title, strings.ToUpper(title), "  " + strings.ReplaceAll(title, " ", "\t ") + " "} {
		e := wantErr(t, env, "create_resource", map[string]any{"data_base64": b64(data), "title": variant}, domainerr.ResourceAlreadyExists)
		enc, _ := json.Marshal(e)
		if e.Retryable || e.Details["update_tool"] != "update_resource" || e.Details["restore_tool"] != nil ||
			!strings.Contains(fmt.Sprint(e.Details["matches"]), first.ID) || strings.Contains(string(enc), title) {
			t.Fatalf("variant %q: %s", variant, enc)
		}
	}
	if n := countResources(t, env, title); n != 1 {
		t.Fatalf("duplicate written: %d resources", n)
	}
	// The same bytes under another title, and other bytes of the same size
	// under the same title, are other resources.
	copyRes := createResource(t, env, map[string]any{"data_base64": b64(data), "title": title + " copy"})
	other := randomBytes(t, 20_000)
	second := createResource(t, env, map[string]any{"data_base64": b64(other), "title": title})
	if copyRes.ID == first.ID || second.ID == first.ID {
		t.Fatal("a create reused an existing resource")
	}
	e := wantErr(t, env, "create_resource", map[string]any{"data_base64": b64(other), "title": title}, domainerr.ResourceAlreadyExists)
	if m := fmt.Sprint(e.Details["matches"]); !strings.Contains(m, second.ID) || strings.Contains(m, first.ID) {
		t.Fatalf("matches %s, want only %s", m, second.ID)
	}
}

// seedNoteWithBody creates a note with a body directly in Joplin.
func seedNoteWithBody(t *testing.T, env Env, notebook, title, body string) string {
	t.Helper()
	var out rawItem
	if err := env.Joplin.Write(context.Background(), "POST", "/notes", nil,
		map[string]any{"parent_id": notebook, "title": title, "body": body}, &out); err != nil || out.ID == "" {
		t.Fatalf("seed note %q: %v", title, err)
	}
	return out.ID
}

func noteBody(t *testing.T, env Env, id string) string {
	t.Helper()
	var n struct {
		Body string `json:"body"`
	}
	if err := env.Joplin.Get(context.Background(), "/notes/"+id, url.Values{"fields": {"body"}}, &n); err != nil {
		t.Fatal(err)
	}
	return n.Body
}

func resourceAttach(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Attach"), "")
	n := seedNoteWithBody(t, env, nb, "Report", "Existing text")
	img := createResource(t, env, map[string]any{"data_base64": b64(pngBytes(t)), "title": unique(t, "Diagram [v2]"),
		"filename": "diagram.png", "note_id": n})
	if img.AttachedToNote != n || img.Mime != "image/png" {
		t.Fatalf("create_resource with note_id: %+v", img)
	}
	body := noteBody(t, env, n)
	if !strings.HasPrefix(body, "Existing text\n\n![") || !strings.HasSuffix(body, "](:/"+img.ID+")") {
		t.Fatalf("note body after attach: %q", body)
	}
	doc := createResource(t, env, map[string]any{"data_base64": b64(pdfBytes), "title": unique(t, "Spec"), "filename": "spec.pdf", "note_id": n})
	if body := noteBody(t, env, n); !strings.Contains(body, "\n\n[") || !strings.HasSuffix(body, "](:/"+doc.ID+")") ||
		strings.Contains(body, "![Spec") {
		t.Fatalf("note body after second attach: %q", body)
	}
	var got resourceOut
	mustCall(t, env, "get_resource", map[string]any{"id": img.ID, "include_notes": true}, &got)
	if len(got.Notes) != 1 || got.Notes[0].ID != n || got.Notes[0].NotebookID != nb || got.Notes[0].Title != "Report" || got.Notes[0].Trashed {
		t.Fatalf("get_resource include_notes: %+v", got.Notes)
	}
	// A trashed note still links to it, flagged; attaching to it is refused.
	trashDirect(t, env, "notes", n)
	mustCall(t, env, "get_resource", map[string]any{"id": img.ID, "include_notes": true}, &got)
	if len(got.Notes) != 1 || !got.Notes[0].Trashed {
		t.Fatalf("trashed linking note: %+v", got.Notes)
	}
	title := unique(t, "Never stored")
	e := wantErr(t, env, "create_resource", map[string]any{"data_base64": b64(randomBytes(t, 500)), "title": title, "note_id": n}, domainerr.InvalidArgument)
	if e.Details["restore_tool"] != "restore_note" {
		t.Fatalf("trashed note: %+v", e)
	}
	e = wantErr(t, env, "create_resource", map[string]any{"data_base64": b64(randomBytes(t, 500)), "title": title, "note_id": joplin.NewID()}, domainerr.NotFound)
	if e.Details["missing"] != "note" {
		t.Fatalf("missing note: %+v", e)
	}
	if c := countResources(t, env, title); c != 0 {
		t.Fatalf("a refused attach created %d resources", c)
	}
	var none resourceOut
	mustCall(t, env, "get_resource", map[string]any{"id": createResource(t, env, map[string]any{"data_base64": b64(randomBytes(t, 10)), "title": title}).ID, "include_notes": true}, &none)
	if none.Notes == nil || len(none.Notes) != 0 {
		t.Fatalf("unlinked resource: notes %v", none.Notes)
	}
}

func resourceUpdate(t *testing.T, env Env) {
	title := unique(t, "Versioned")
	r := createResource(t, env, map[string]any{"data_base64": b64(randomBytes(t, 10_000)), "title": title})
	v2 := randomBytes(t, 50_000)
	var u resourceOut
	mustCall(t, env, "update_resource", map[string]any{"id": r.ID, "data_base64": b64(v2)}, &u)
	if u.ID != r.ID || u.Size != 50_000 || u.SHA256 != sha(v2) || u.Title != title || u.Mime != "application/octet-stream" {
		t.Fatalf("update content: %+v", u)
	}
	if got, _ := contentOf(t, env, r.ID); !bytes.Equal(got, v2) {
		t.Fatal("content not replaced")
	}
	renamed := unique(t, "Renamed")
	u = resourceOut{}
	mustCall(t, env, "update_resource", map[string]any{"id": r.ID, "title": renamed, "filename": "v2.bin", "mime": "application/x-versioned"}, &u)
	if u.Title != renamed || u.Filename != "v2.bin" || u.Mime != "application/x-versioned" || u.SHA256 != "" || u.Size != 50_000 {
		t.Fatalf("update metadata: %+v", u)
	}
	img := pngBytes(t)
	u = resourceOut{}
	mustCall(t, env, "update_resource", map[string]any{"id": r.ID, "data_base64": b64(img), "mime": "image/png"}, &u)
	if raw := rawResource(t, env, r.ID); u.Mime != "image/png" || raw["file_extension"] != "png" || u.Title != renamed || u.Filename != "v2.bin" {
		t.Fatalf("update content and mime: %+v, Joplin %v", u, raw)
	}
	e := wantErr(t, env, "update_resource", map[string]any{"id": r.ID, "mime": "application/pdf"}, domainerr.InvalidArgument)
	if e.Details["field"] != "mime" {
		t.Fatalf("implausible mime for the stored content: %+v", e)
	}
	// Taking another resource's content and title is refused, writing nothing.
	otherData := randomBytes(t, 3000)
	other := createResource(t, env, map[string]any{"data_base64": b64(otherData), "title": unique(t, "Other")})
	e = wantErr(t, env, "update_resource", map[string]any{"id": r.ID, "data_base64": b64(otherData), "title": " " + strings.ToLower(other.Title)}, domainerr.ResourceAlreadyExists)
	if !strings.Contains(fmt.Sprint(e.Details["matches"]), other.ID) {
		t.Fatalf("identity clash: %+v", e.Details)
	}
	if got, _ := contentOf(t, env, r.ID); !bytes.Equal(got, img) || rawResource(t, env, r.ID)["title"] != renamed {
		t.Fatal("a refused update wrote")
	}
	wantErr(t, env, "update_resource", map[string]any{"id": r.ID}, domainerr.InvalidArgument)
}

func resourceList(t *testing.T, env Env) {
	var mine []string
	for i, size := range []int{700, 70, 7000} {
		r := createResource(t, env, map[string]any{"data_base64": b64(randomBytes(t, size)), "title": unique(t, fmt.Sprintf("Listed %d", i))})
		mine = append(mine, r.ID)
	}
	type page struct {
		Resources []resourceOut `json:"resources"`
		Page      int           `json:"page"`
		HasMore   bool          `json:"has_more"`
	}
	seen, total, last := map[string]bool{}, 0, int64(1<<62)
	for p := 1; ; p++ {
		var l page
		mustCall(t, env, "list_resources", map[string]any{"order_by": "size", "order_dir": "desc", "limit": 100, "page": p}, &l)
		for _, r := range l.Resources {
			if r.Size > last || r.Mime == "" {
				t.Fatalf("list_resources by size desc: %+v after size %d", r, last)
			}
			last, seen[r.ID] = r.Size, true
		}
		total += len(l.Resources)
		if l.Page != p || !l.HasMore {
			break
		}
	}
	for _, id := range mine {
		if !seen[id] {
			t.Fatalf("list_resources lacks %s", id)
		}
	}
	// has_more is exact, even on an exactly full last page.
	limit := min(total, 100)
	lastPage := (total + limit - 1) / limit
	var l page
	mustCall(t, env, "list_resources", map[string]any{"limit": limit, "page": lastPage}, &l)
	if l.HasMore || len(l.Resources) != total-(lastPage-1)*limit {
		t.Fatalf("last page %d of %d items: %d items, has_more %v", lastPage, total, len(l.Resources), l.HasMore)
	}
	mustCall(t, env, "list_resources", map[string]any{"limit": 1}, &l)
	if !l.HasMore || len(l.Resources) != 1 {
		t.Fatalf("first page of 1: %+v", l)
	}
}

func resourceDelete(t *testing.T, env Env) {
	r := createResource(t, env, map[string]any{"data_base64": b64(randomBytes(t, 1000)), "title": unique(t, "Doomed")})
	var del struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}
	mustCall(t, env, "delete_resource", map[string]any{"id": r.ID}, &del)
	if del.ID != r.ID || !del.Deleted {
		t.Fatalf("delete_resource: %+v", del)
	}
	if err := env.Joplin.Get(context.Background(), "/resources/"+r.ID, nil, nil); err == nil {
		t.Fatal("the resource is still in Joplin")
	}
	for _, id := range []string{r.ID, joplin.NewID()} {
		for op, args := range map[string]map[string]any{
			"get_resource":         {"id": id, "include_notes": true},
			"get_resource_content": {"id": id},
			"update_resource":      {"id": id, "title": "x"},
			"delete_resource":      {"id": id},
		} {
			if e := wantErr(t, env, op, args, domainerr.NotFound); e.Details["missing"] != "resource" {
				t.Fatalf("%s: %+v", op, e)
			}
		}
	}
}
