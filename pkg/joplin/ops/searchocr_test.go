package joplinops_test

import (
	"context"
	"encoding/base64"
	"testing"
)

// TestSearchFindsAttachmentOCRText: words in the OCR text of a resource a
// note links to find the note, and the hit names the resource; a resource
// the bridge changes has its notes re-indexed with its current OCR text.
func TestSearchFindsAttachmentOCRText(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	ctx := context.Background()
	nb := h.call(t, "create_notebook", map[string]any{"title": "Scans"})["id"].(string)
	upload := func(title string) string {
		return h.call(t, "create_resource", map[string]any{"title": title, "filename": title + ".pdf",
			"data_base64": base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 " + title))})["id"].(string)
	}
	setOCR := func(id, text string) {
		if err := h.c.Write(ctx, "PUT", "/resources/"+id, nil, map[string]any{"ocr_text": text, "ocr_status": 2}, nil); err != nil {
			t.Fatal(err)
		}
	}
	a, b := upload("a"), upload("b")
	setOCR(a, "Invoice 4711 for plumbing")
	h.call(t, "create_note", map[string]any{"title": "Paperwork", "body": "![](:/" + a + ")\n[](:/" + b + ")\n", "notebook_id": nb})
	h.x.Start()
	for s := range signals {
		if s == "built" {
			break
		}
	}
	hit := func(query string) map[string]any {
		t.Helper()
		items := h.call(t, "search", map[string]any{"query": query})["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("search %q: %v", query, items)
		}
		return items[0].(map[string]any)
	}
	if it := hit("invoice"); it["title"] != "Paperwork" || it["attachment"] != a || it["attachment_snippet"] != "**Invoice** 4711 for plumbing" {
		t.Fatalf("attachment hit: %v", it)
	}
	if it := hit("paperwork"); it["attachment"] != nil {
		t.Fatalf("title hit names an attachment: %v", it)
	}
	// OCR arrives for b (as a sync from the desktop would bring it); a
	// change the bridge makes to b re-indexes the note with it.
	setOCR(b, "Warranty card")
	h.call(t, "update_resource", map[string]any{"id": b, "title": "warranty"})
	if it := hit("warranty"); it["attachment"] != b {
		t.Fatalf("after update: %v", it)
	}
}

// TestHybridSearchNamesTheAttachment: a hybrid search (keywords fused with
// meaning) reports the attachment a keyword hit matched in, as the keyword
// search does.
func TestHybridSearchNamesTheAttachment(t *testing.T) {
	h, signals := newEmbeddingHarness(t)
	nb := h.call(t, "create_notebook", map[string]any{"title": "Scans"})["id"].(string)
	res := h.call(t, "create_resource", map[string]any{"title": "scan", "filename": "scan.pdf",
		"data_base64": base64.StdEncoding.EncodeToString([]byte("%PDF-1.4"))})["id"].(string)
	if err := h.c.Write(context.Background(), "PUT", "/resources/"+res, nil, map[string]any{"ocr_text": "Invoice 4711", "ocr_status": 2}, nil); err != nil {
		t.Fatal(err)
	}
	h.call(t, "create_note", map[string]any{"title": "Paperwork", "body": "![](:/" + res + ")\n", "notebook_id": nb})
	h.x.Start()
	waitSignal(t, signals, "meaning ready")
	out := h.call(t, "search", map[string]any{"query": "invoice"})
	items := out["items"].([]any)
	if out["mode"] != "hybrid" || len(items) == 0 || items[0].(map[string]any)["attachment"] != res {
		t.Fatalf("hybrid search: %v", out)
	}
}
