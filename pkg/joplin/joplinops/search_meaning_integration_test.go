//go:build integration

package joplinops_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// meaningSearch calls search in mode and returns the first title, the
// answering mode and the semantic state.
func (b *indexedBridge) meaningSearch(t *testing.T, query, mode string) (first, answered, semantic string) {
	t.Helper()
	res, derr := b.ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "search", []byte(fmt.Sprintf(`{"query":%q,"mode":%q,"limit":3}`, query, mode)))
	if derr != nil {
		t.Fatalf("search %q: %v", query, derr)
	}
	var out struct {
		Items []struct {
			Title string `json:"title"`
		} `json:"results"`
		Mode     string `json:"mode"`
		Semantic string `json:"semantic"`
	}
	mustJSON(t, res, &out)
	if len(out.Items) > 0 {
		first = out.Items[0].Title
	}
	return first, out.Mode, out.Semantic
}

// TestRealJoplinSearchByMeaning: with real Joplin and the stub provider,
// the notes are embedded in the background, found by meaning; a note
// written through notebridge and one created straight through Joplin's
// REST API are found by meaning soon after; a provider outage leaves
// keyword search answering; a restart sends nothing to embed again.
func TestRealJoplinSearchByMeaning(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	c := newClient(t, j)
	seedOracle(t, c)
	p := embedtest.New()
	defer p.Close()
	provider, err := embed.New(embed.Config{BaseURL: p.BaseURL(), Model: "concepts"})
	must(t, err)
	path := filepath.Join(t.TempDir(), "index.db")
	b := newMeaningBridge(t, c, path, joplinindex.MeaningConfig{Provider: provider})
	b.x.Start()
	b.waitFor(t, "meaning ready")
	if first, mode, sem := b.meaningSearch(t, "money plan for the farm", "hybrid"); first != "Budget 2026" || mode != "hybrid" || sem != "ready" {
		t.Errorf("hybrid: first %q, mode %s, semantic %s", first, mode, sem)
	}
	ctx := context.Background()
	var nb struct {
		ID string `json:"id"`
	}
	must(t, c.Write(ctx, "POST", "/folders", nil, map[string]any{"title": "Fresh"}, &nb))
	start := time.Now()
	if _, derr := b.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "create_note", []byte(fmt.Sprintf(`{"title":"Garage","body":"tyres replaced by the mechanic","notebook_id":%q}`, nb.ID))); derr != nil {
		t.Fatal(derr)
	}
	b.waitFor(t, "embedded")
	t.Logf("own write searchable by meaning after %v", time.Since(start).Round(time.Millisecond))
	if first, _, _ := b.meaningSearch(t, "vehicle service", "semantic"); first != "Garage" {
		t.Errorf("own write by meaning: first %q", first)
	}
	start = time.Now()
	must(t, c.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "Checkup", "body": "doctor at the clinic", "parent_id": nb.ID}, nil))
	for {
		if first, _, _ := b.meaningSearch(t, "physician appointment", "semantic"); first == "Checkup" {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("an external create was not found by meaning within 5 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("external create searchable by meaning after %v", time.Since(start).Round(time.Millisecond))

	p.Set(func(s *embedtest.Server) { s.Fail = true })
	if first, mode, sem := b.meaningSearch(t, "mechanic", "hybrid"); first != "Garage" || mode != "keyword" || sem != "unavailable" {
		t.Errorf("provider down: first %q, mode %s, semantic %s", first, mode, sem)
	}
	p.Set(func(s *embedtest.Server) { s.Fail = false })
	b.x.Close()
	requests, _ := p.Count()
	b2 := newMeaningBridge(t, c, path, joplinindex.MeaningConfig{Provider: provider})
	b2.x.Start()
	b2.waitFor(t, "meaning ready")
	if again, _ := p.Count(); again != requests {
		t.Errorf("the restart sent %d embedding requests", again-requests)
	}
}
