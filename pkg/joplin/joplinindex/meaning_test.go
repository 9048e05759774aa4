package joplinindex

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
)

// startMeaning runs an Indexer with search by meaning on, embedding with
// the stub provider p under model.
func (e *env) startMeaning(t *testing.T, p *embedtest.Server, model string, tune func(*MeaningConfig)) *Indexer {
	t.Helper()
	c, err := embed.New(embed.Config{BaseURL: p.BaseURL(), Model: model})
	if err != nil {
		t.Fatal(err)
	}
	mc := MeaningConfig{Provider: c, Batch: 4, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	if tune != nil {
		tune(&mc)
	}
	x := New(e.c, Config{Path: e.path, Poll: 5 * time.Millisecond, Reconcile: time.Hour,
		Applied: func(what string) { e.applied <- what }, Meaning: mc})
	t.Cleanup(func() { x.Close() })
	x.Start()
	return x
}

// seedNotes creates a notebook and notes (title, body, title, body, …)
// straight through Joplin and returns the notebook id.
func (e *env) seedNotes(t *testing.T, titleBody ...string) any {
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Home"})["id"]
	for i := 0; i+1 < len(titleBody); i += 2 {
		e.write(t, "POST", "/notes", map[string]any{"title": titleBody[i], "body": titleBody[i+1], "parent_id": f})
	}
	return f
}

func newProvider(t *testing.T) *embedtest.Server {
	p := embedtest.New()
	t.Cleanup(p.Close)
	return p
}

// meaningFind searches in mode and returns the titles in rank order and
// the result.
func meaningFind(t *testing.T, x *Indexer, query, mode string, opts searchindex.Options) ([]string, MeaningResult) {
	t.Helper()
	if opts.Limit == 0 {
		opts.Limit = 20
	}
	r, err := x.SearchByMeaning(context.Background(), query, opts, mode)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK {
		t.Fatalf("%q: the index did not answer (%s)", query, r.State)
	}
	var titles []string
	for _, h := range r.Hits {
		titles = append(titles, h.Title)
	}
	return titles, r
}

func TestMeaningEmbedsIncrementallyAndResumes(t *testing.T) {
	dir := t.TempDir()
	e := newEnvAt(t, dir, t.Cleanup)
	p := newProvider(t)
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Home"})["id"]
	for i := range 30 {
		e.write(t, "POST", "/notes", map[string]any{"title": "note " + string(rune('a'+i%26)), "body": "# one\nguitar practice\n# two\nkitchen oven", "parent_id": f})
	}
	kitchen := e.write(t, "POST", "/notes", map[string]any{"title": "Kitchen works", "body": "# Budget\nAgreed 14,000 euros for the remodel\n# Schedule\nMarch start", "parent_id": f})
	x := e.startMeaning(t, p, "m1", nil)
	e.wait(t, "meaning ready")
	st := x.Status().Meaning
	if st.State != MeaningReady || st.Chunks != 62 || st.Done != 62 || st.Pending != 0 || st.Dimension != 64 || st.Model != "m1" {
		t.Fatalf("status after the first embedding: %+v", st)
	}
	// 30 identical notes but for the title: chunks keyed by content, each
	// embedded once (the title is part of the chunk: 26 distinct titles).
	_, inputs := p.Count()
	if inputs != 26*2+2 {
		t.Errorf("%d chunks sent, want %d (one per distinct content)", inputs, 26*2+2)
	}
	// An edit through notebridge re-embeds the changed chunk only.
	e.own(t, "PUT", "/notes/"+kitchen["id"].(string), map[string]any{"body": "# Budget\nAgreed 15,000 euros for the remodel\n# Schedule\nMarch start"})
	e.wait(t, "embedded")
	if _, after := p.Count(); after != inputs+1 {
		t.Errorf("an edit of one section sent %d chunks, want 1", after-inputs)
	}
	titles, r := meaningFind(t, x, "kitchen renovation cost", ModeSemantic, searchindex.Options{})
	if len(titles) == 0 || titles[0] != "Kitchen works" || r.Semantic != SemanticReady || r.Mode != ModeSemantic {
		t.Fatalf("semantic search after the edit: %q %+v", titles, r)
	}
	if !strings.Contains(r.Hits[0].Snippet, "15,000") {
		t.Errorf("snippet %q is not the budget chunk", r.Hits[0].Snippet)
	}
	x.Close()

	// A restart resumes from the stored vectors: nothing is sent again.
	requests, _ := p.Count()
	x = e.startMeaning(t, p, "m1", nil)
	e.wait(t, "resumed")
	e.wait(t, "meaning ready")
	if again, _ := p.Count(); again != requests {
		t.Errorf("the restart sent %d embedding requests, want none", again-requests)
	}
	if titles, _ := meaningFind(t, x, "kitchen renovation cost", ModeSemantic, searchindex.Options{}); len(titles) == 0 || titles[0] != "Kitchen works" {
		t.Errorf("after the restart: %q", titles)
	}
	x.Close()

	// Another model re-embeds everything in the background.
	_, before := p.Count()
	x = e.startMeaning(t, p, "m2", nil)
	e.wait(t, "meaning ready")
	if _, after := p.Count(); after-before != inputs {
		t.Errorf("a model change sent %d chunks, want all %d", after-before, inputs)
	}
	if st := x.Status().Meaning; st.Model != "m2" || st.Done != 62 {
		t.Errorf("after the model change: %+v", st)
	}
}

func TestMeaningOutageFallsBackToKeywords(t *testing.T) {
	e := newEnv(t)
	p := newProvider(t)
	e.seedNotes(t, "GP appointment", "checkup at the clinic on Tuesday")
	p.Set(func(s *embedtest.Server) { s.Fail = true })
	x := e.startMeaning(t, p, "m", nil)
	e.wait(t, "meaning paused")
	st := x.Status().Meaning
	if st.State != MeaningPaused || st.FailedRequests == 0 || !strings.Contains(st.Error, "503") {
		t.Errorf("status during the outage: %+v", st)
	}
	titles, r := meaningFind(t, x, "clinic", ModeHybrid, searchindex.Options{})
	if len(titles) != 1 || r.Mode != ModeKeyword || r.Semantic != SemanticPending {
		t.Errorf("hybrid during the outage: %q %+v, want the keyword hit", titles, r)
	}
	if x.MeaningReady() {
		t.Error("ready before anything was embedded")
	}
	p.Set(func(s *embedtest.Server) { s.Fail = false })
	e.wait(t, "meaning ready")
	// Then the provider fails while the vectors are there: the query
	// cannot be embedded, keywords answer.
	p.Set(func(s *embedtest.Server) { s.Fail = true })
	titles, r = meaningFind(t, x, "clinic", ModeSemantic, searchindex.Options{})
	if len(titles) != 1 || r.Mode != ModeKeyword || r.Semantic != SemanticUnavailable {
		t.Errorf("semantic with the provider down: %q %+v", titles, r)
	}
}

func TestSlowProviderDoesNotHoldTheSearch(t *testing.T) {
	e := newEnv(t)
	p := newProvider(t)
	e.seedNotes(t, "Guitar", "chords practice")
	x := e.startMeaning(t, p, "m", func(c *MeaningConfig) { c.QueryWait = 20 * time.Millisecond })
	e.wait(t, "meaning ready")
	// A repeated query is embedded once (cached).
	calls := func() (n int) {
		p.Set(func(s *embedtest.Server) { n = s.Calls })
		return n
	}
	first := calls()
	meaningFind(t, x, "guitar lessons", ModeSemantic, searchindex.Options{})
	meaningFind(t, x, "guitar lessons", ModeSemantic, searchindex.Options{})
	if n := calls() - first; n != 1 {
		t.Errorf("a query searched twice was embedded %d times, want once", n)
	}
	stall := make(chan struct{})
	defer close(stall)
	p.Set(func(s *embedtest.Server) { s.Stall = stall })
	start := time.Now()
	titles, r := meaningFind(t, x, "chords", ModeHybrid, searchindex.Options{})
	if len(titles) != 1 || r.Mode != ModeKeyword || r.Semantic != SemanticUnavailable {
		t.Errorf("stalled provider: %q %+v", titles, r)
	}
	// A loose bound (50 times the wait): the search must not wait for
	// the provider's own 30 s timeout.
	if d := time.Since(start); d > time.Second {
		t.Errorf("the search waited %v on a stalled provider (QueryWait 20 ms)", d)
	}
	// The next search does not call the provider known to be down.
	before := calls()
	meaningFind(t, x, "other words", ModeHybrid, searchindex.Options{})
	if calls() != before {
		t.Error("a search called a provider known to be down")
	}
}

func TestRateLimitsAndOversizedChunks(t *testing.T) {
	e := newEnv(t)
	p := newProvider(t)
	f := e.seedNotes(t, "short", "guitar", "long", strings.Repeat("word ", 200))
	p.Set(func(s *embedtest.Server) { s.RateLimit, s.MaxInput = 3, 100 })
	x := e.startMeaning(t, p, "m", nil)
	e.wait(t, "meaning ready")
	st := x.Status().Meaning
	if st.Done != 1 || st.Refused != 1 || st.FailedRequests < 3 {
		t.Errorf("status: %+v, want 1 done, 1 refused, ≥ 3 failed requests (429)", st)
	}
	// The refused chunk is not sent again.
	calls := func() int {
		n := 0
		p.Set(func(s *embedtest.Server) { n = s.Calls })
		return n
	}
	before := calls()
	e.own(t, "POST", "/notes", map[string]any{"title": "another", "body": "piano", "parent_id": f})
	e.wait(t, "embedded")
	if n := calls() - before; n != 1 {
		t.Errorf("%d requests after one new note, want 1", n)
	}
}

func TestDimensionChangeIsAnError(t *testing.T) {
	e := newEnv(t)
	p := newProvider(t)
	f := e.seedNotes(t, "one", "guitar")
	x := e.startMeaning(t, p, "m", nil)
	e.wait(t, "meaning ready")
	p.Set(func(s *embedtest.Server) { s.Dim = 32 })
	before := time.Now().Truncate(time.Second)
	e.own(t, "POST", "/notes", map[string]any{"title": "two", "body": "piano", "parent_id": f})
	e.wait(t, "meaning failed")
	st := x.Status().Meaning
	if st.State != MeaningFailed || !strings.Contains(st.Error, "32 dimensions") || st.Done != 1 {
		t.Errorf("status: %+v", st)
	}
	// The embedder holds for its longest backoff, and says until when.
	if next, err := time.Parse(time.RFC3339, st.NextTry); err != nil || next.Before(before) {
		t.Errorf("next try %q (%v), want a time after %v", st.NextTry, err, before)
	}
	if x.MeaningReady() {
		t.Error("hybrid stays the default after a dimension change")
	}
	if _, r := meaningFind(t, x, "guitar", ModeSemantic, searchindex.Options{}); r.Semantic != SemanticFailed || r.Mode != ModeKeyword {
		t.Errorf("search: %+v", r)
	}
}

// TestInterruptedEmbeddingResumes: a bridge stopped half-way through the
// first embedding sends, after its restart, only what was not stored
// (at most the batch in flight at the stop again).
func TestInterruptedEmbeddingResumes(t *testing.T) {
	dir := t.TempDir()
	e := newEnvAt(t, dir, t.Cleanup)
	p := newProvider(t)
	var notes []string
	for i := range 40 {
		notes = append(notes, fmt.Sprintf("note %d", i), fmt.Sprintf("body of note %d", i))
	}
	e.seedNotes(t, notes...)
	one := func(c *MeaningConfig) { c.Concurrency = 1 }
	x := e.startMeaning(t, p, "m", one)
	e.wait(t, "embedded")
	x.Close()
	var sent int
	p.Set(func(s *embedtest.Server) { sent = s.Inputs })
	if sent >= 40 {
		t.Fatalf("everything was embedded before the stop (%d): nothing to resume", sent)
	}
	x = e.startMeaning(t, p, "m", one)
	e.wait(t, "meaning ready")
	if st := x.Status().Meaning; st.Done != 40 {
		t.Fatalf("after the restart: %+v", st)
	}
	p.Set(func(s *embedtest.Server) {
		seen := map[string]int{}
		for _, text := range s.Texts {
			seen[text]++
		}
		if again := len(s.Texts) - len(seen); len(seen) != 40 || again > 4 {
			t.Errorf("%d distinct chunks sent, %d sent twice (at most one batch of 4 may be)", len(seen), again)
		}
	})
}
