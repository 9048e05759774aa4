package joplinindex

import (
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
)

// startProvider runs an Indexer embedding through a client made of cfg
// (its BaseURL set to the stub's).
func (e *env) startProvider(t *testing.T, p *embedtest.Server, cfg embed.Config) *Indexer {
	t.Helper()
	cfg.BaseURL = p.BaseURL()
	c, err := embed.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	x := New(e.c, Config{Path: e.path, Poll: 5 * time.Millisecond, Reconcile: time.Hour,
		Applied: func(what string) { e.applied <- what },
		Meaning: MeaningConfig{Provider: c, Batch: 4, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
	t.Cleanup(func() { x.Close() })
	x.Start()
	return x
}

// texts returns what the stub was sent since from, and the count now.
func texts(p *embedtest.Server, from int) ([]string, int) {
	var got []string
	p.Set(func(s *embedtest.Server) { got = append(got, s.Texts[from:]...) })
	return got, from + len(got)
}

func TestPrefixesReachTheModelAndADocumentPrefixChangeReEmbeds(t *testing.T) {
	e := newEnvAt(t, t.TempDir(), t.Cleanup)
	p := newProvider(t)
	e.seedNotes(t, "Kitchen works", "Agreed 14,000 euros for the remodel", "Garden", "tomatoes and seedlings")
	const model = "intfloat/multilingual-e5-small"

	x := e.startProvider(t, p, embed.Config{Model: model})
	e.wait(t, "meaning ready")
	sent, seen := texts(p, 0)
	if len(sent) != 2 {
		t.Fatalf("sent %d chunks, want 2: %q", len(sent), sent)
	}
	for _, s := range sent {
		if !strings.HasPrefix(s, "passage: ") {
			t.Errorf("chunk %q went without e5's passage prefix", s)
		}
	}
	if st := x.Status().Meaning; st.QueryPrefix != "query: " || st.DocumentPrefix != "passage: " {
		t.Errorf("status shows prefixes %q / %q", st.QueryPrefix, st.DocumentPrefix)
	}
	if titles, _ := meaningFind(t, x, "kitchen renovation cost", ModeSemantic, searchindex.Options{}); len(titles) == 0 || titles[0] != "Kitchen works" {
		t.Errorf("semantic search: %q", titles)
	}
	sent, seen = texts(p, seen)
	if len(sent) != 1 || sent[0] != "query: kitchen renovation cost" {
		t.Errorf("the query went as %q, want e5's query prefix before it", sent)
	}
	x.Close()

	// Another query prefix holds from the next query; no vector is redone.
	query := "Q> "
	x = e.startProvider(t, p, embed.Config{Model: model, QueryPrefix: &query})
	e.wait(t, "meaning ready")
	meaningFind(t, x, "garden vegetables", ModeSemantic, searchindex.Options{})
	if sent, seen = texts(p, seen); len(sent) != 1 || sent[0] != "Q> garden vegetables" {
		t.Errorf("after a query prefix change the stub got %q, want only the query with the new prefix", sent)
	}
	x.Close()

	// Another document prefix ("" = none) re-embeds every chunk.
	none := ""
	x = e.startProvider(t, p, embed.Config{Model: model, DocumentPrefix: &none})
	e.wait(t, "meaning ready")
	sent, _ = texts(p, seen)
	if len(sent) != 2 || strings.HasPrefix(sent[0], "passage: ") || strings.HasPrefix(sent[1], "passage: ") {
		t.Errorf("a document prefix change sent %q, want both chunks again without a prefix", sent)
	}
	if st := x.Status().Meaning; st.DocumentPrefix != "" || st.QueryPrefix != "query: " || st.Done != 2 {
		t.Errorf("after the document prefix change: %+v", st)
	}
}
