package joplinops_test

import (
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
	"github.com/notebridge/notebridge/pkg/testkit/eventwait"
)

func waitSignal(t *testing.T, signals chan string, what string) {
	t.Helper()
	timeout := eventwait.GiveUp(t)
	for {
		select {
		case s := <-signals:
			if s == what {
				return
			}
		case <-timeout:
			t.Fatalf("never signalled %q", what)
		}
	}
}

// newEmbeddingHarness is an index harness with search by meaning through
// a fake embeddings provider; signals receives the indexer's signals.
func newEmbeddingHarness(t *testing.T) (*indexHarness, chan string) {
	p := embedtest.New()
	t.Cleanup(p.Close)
	provider, err := embed.New(embed.Config{BaseURL: p.BaseURL(), Model: "concepts"})
	if err != nil {
		t.Fatal(err)
	}
	signals := make(chan string, 1000)
	return newMeaningHarness(t, signals, joplinindex.MeaningConfig{Provider: provider}), signals
}

// TestSearchWithoutEmbeddingsIsUnchanged: with no provider the result
// carries no mode, as before search by meaning; asking for it says off.
func TestSearchWithoutEmbeddingsIsUnchanged(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	nb := h.call(t, "create_notebook", map[string]any{"title": "Home"})["id"].(string)
	h.call(t, "create_note", map[string]any{"title": "GP appointment", "body": "checkup at the clinic", "notebook_id": nb})
	h.x.Start()
	waitSignal(t, signals, "built")
	res := h.call(t, "search", map[string]any{"query": "clinic"})
	if _, has := res["mode"]; has || res["semantic"] != nil || len(res["results"].([]any)) != 1 {
		t.Errorf("default search without embeddings: %v", res)
	}
	res = h.call(t, "search", map[string]any{"query": "clinic", "mode": "semantic"})
	if res["mode"] != "keyword" || res["semantic"] != "off" || len(res["results"].([]any)) != 1 {
		t.Errorf("semantic asked without embeddings: %v", res)
	}
	if _, derr := h.try("search", map[string]any{"query": "clinic", "mode": "vector"}); derr == nil || derr.Code != domainerr.InvalidArgument {
		t.Errorf("unknown mode: %v", derr)
	}
	if st := h.call(t, "joplin_status", map[string]any{})["index"].(map[string]any); st["meaning"] != nil {
		t.Errorf("status reports search by meaning while off: %v", st)
	}
}

// TestSearchByMeaningThroughTheTool: hybrid is the default once every
// note is embedded; a note written through the tools is found by meaning
// as soon as its chunks are embedded; joplin_status shows the progress.
func TestSearchByMeaningThroughTheTool(t *testing.T) {
	h, signals := newEmbeddingHarness(t)
	nb := h.call(t, "create_notebook", map[string]any{"title": "Home"})["id"].(string)
	h.call(t, "create_note", map[string]any{"title": "GP appointment", "body": "checkup at the clinic", "notebook_id": nb})
	h.x.Start()
	waitSignal(t, signals, "meaning ready")
	res := h.call(t, "search", map[string]any{"query": "physician visit"})
	items := res["results"].([]any)
	if res["mode"] != "hybrid" || res["semantic"] != "ready" || len(items) != 1 || items[0].(map[string]any)["title"] != "GP appointment" {
		t.Fatalf("default search once embedded: %v", res)
	}
	h.call(t, "create_note", map[string]any{"title": "Car", "body": "tyres and garage", "notebook_id": nb})
	waitSignal(t, signals, "embedded")
	res = h.call(t, "search", map[string]any{"query": "vehicle mechanic", "mode": "semantic", "limit": 1})
	items = res["results"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["title"] != "Car" || items[0].(map[string]any)["snippet"] != "tyres and garage" {
		t.Errorf("a new note by meaning: %v", res)
	}
	if res["has_more"] != true {
		t.Errorf("semantic ranks every note: has_more %v", res["has_more"])
	}
	res = h.call(t, "search", map[string]any{"query": "physician visit", "mode": "keyword"})
	if res["mode"] != "keyword" || len(res["results"].([]any)) != 0 {
		t.Errorf("keyword mode: %v", res)
	}
	st := h.call(t, "joplin_status", map[string]any{})["index"].(map[string]any)["meaning"].(map[string]any)
	if st["state"] != "ready" || st["model"] != "concepts" || st["done"] != float64(2) || st["pending"] != float64(0) || st["dimension"] != float64(64) {
		t.Errorf("joplin_status meaning: %v", st)
	}
}
