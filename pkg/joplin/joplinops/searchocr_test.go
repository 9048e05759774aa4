package joplinops_test

import (
	"context"
	"testing"
)

// seedScans creates, behind the index's back, a notebook, two PDF
// resources (the first with OCR text) and a note linking to both; it
// returns the resource ids.
func seedScans(t *testing.T, h *indexHarness) (a, b string) {
	t.Helper()
	ctx := context.Background()
	var nb, ra, rb struct{ ID string }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.raw.Write(ctx, "POST", "/folders", nil, map[string]any{"title": "Scans"}, &nb))
	must(h.raw.WriteMultipartFile(ctx, "POST", "/resources", map[string]any{"title": "a"}, "a.pdf", []byte("%PDF-1.4 a"), &ra))
	must(h.raw.WriteMultipartFile(ctx, "POST", "/resources", map[string]any{"title": "b"}, "b.pdf", []byte("%PDF-1.4 b"), &rb))
	setOCR(t, h, ra.ID, "Invoice 4711 for plumbing")
	must(h.raw.Write(ctx, "POST", "/notes", nil, map[string]any{"parent_id": nb.ID, "title": "Paperwork",
		"body": "![](:/" + ra.ID + ")\n[](:/" + rb.ID + ")\n"}, nil))
	return ra.ID, rb.ID
}

// setOCR sets a resource's OCR text as the desktop app (or a sync) does.
func setOCR(t *testing.T, h *indexHarness, id, text string) {
	t.Helper()
	if err := h.raw.Write(context.Background(), "PUT", "/resources/"+id, nil, map[string]any{"ocr_text": text, "ocr_status": 2}, nil); err != nil {
		t.Fatal(err)
	}
}

// oneHit runs a search that must find exactly one note.
func oneHit(t *testing.T, h *indexHarness, query string) map[string]any {
	t.Helper()
	out := h.call(t, "search", map[string]any{"query": query})
	items := out["results"].([]any)
	if len(items) != 1 {
		t.Fatalf("search %q: %v", query, out)
	}
	return items[0].(map[string]any)
}

// TestSearchFindsAttachmentOCRText: words in the OCR text of a resource a
// note links to find the note, and the hit names the resource; a resource
// the bridge changes has its notes re-indexed with its current OCR text.
func TestSearchFindsAttachmentOCRText(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	a, b := seedScans(t, h)
	h.x.Start()
	waitSignal(t, signals, "built")
	if it := oneHit(t, h, "invoice"); it["title"] != "Paperwork" || it["attachment"] != a || it["attachment_snippet"] != "**Invoice** 4711 for plumbing" {
		t.Fatalf("attachment hit: %v", it)
	}
	if it := oneHit(t, h, "paperwork"); it["attachment"] != nil {
		t.Fatalf("title hit names an attachment: %v", it)
	}
	// OCR arrives for b (as a sync from the desktop would bring it); a
	// change the bridge makes to b re-indexes the note with it.
	setOCR(t, h, b, "Warranty card")
	h.call(t, "update_resource", map[string]any{"id": b, "title": "warranty"})
	if it := oneHit(t, h, "warranty"); it["attachment"] != b {
		t.Fatalf("after update: %v", it)
	}
}

// TestHybridSearchNamesTheAttachment: a hybrid search (keywords fused with
// meaning) reports the attachment a keyword hit matched in, as the keyword
// search does.
func TestHybridSearchNamesTheAttachment(t *testing.T) {
	h, signals := newEmbeddingHarness(t)
	a, _ := seedScans(t, h)
	h.x.Start()
	waitSignal(t, signals, "meaning ready")
	out := h.call(t, "search", map[string]any{"query": "invoice"})
	items := out["results"].([]any)
	if out["mode"] != "hybrid" || len(items) == 0 || items[0].(map[string]any)["attachment"] != a {
		t.Fatalf("hybrid search: %v", out)
	}
}
