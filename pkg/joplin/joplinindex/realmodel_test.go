//go:build realmodel

package joplinindex

// The real-model relevance proof, run by .ci/run (not by go test ./...):
//
//	node deploy/embedder/server.js --listen 127.0.0.1:8090 &
//	NOTEBRIDGE_REAL_EMBEDDINGS_URL=http://127.0.0.1:8090/v1 \
//	  go test -tags realmodel -count=1 -v -run RealModel ./pkg/joplin/joplinindex
//
// It ranks the graded corpus (realmodel_corpus_test.go) through the real
// indexer with a real model, and ranks the same chunks from the model's own
// float32 vectors, to show what the bridge keeps of the model's quality.

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/joplin/vecsearch"
)

const realModel = "universal-sentence-encoder-lite"

func realProvider(t *testing.T) *embed.Client {
	t.Helper()
	url := os.Getenv("NOTEBRIDGE_REAL_EMBEDDINGS_URL")
	if url == "" {
		t.Fatal("NOTEBRIDGE_REAL_EMBEDDINGS_URL is not set: start deploy/embedder/server.js and point it there")
	}
	p, err := embed.New(embed.Config{BaseURL: url, Model: realModel, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRealModelKeepsTheModelsQuality(t *testing.T) {
	if len(gradedNotes) < 40 || len(gradedQueries) < 30 {
		t.Fatalf("the graded corpus has %d notes and %d queries, want at least 40 and 30", len(gradedNotes), len(gradedQueries))
	}
	provider := realProvider(t)
	e := newEnv(t)
	folders := map[string]any{}
	for _, n := range gradedNotes {
		if folders[n.notebook] == nil {
			folders[n.notebook] = e.write(t, "POST", "/folders", map[string]any{"title": n.notebook})["id"]
		}
		e.write(t, "POST", "/notes", map[string]any{"title": n.title, "body": n.body, "parent_id": folders[n.notebook]})
	}
	x := New(e.c, Config{Path: e.path, Poll: 5 * time.Millisecond, Reconcile: time.Hour,
		Applied: func(what string) { e.applied <- what },
		Meaning: MeaningConfig{Provider: provider, QueryWait: time.Minute}})
	t.Cleanup(func() { x.Close() })
	started := time.Now()
	x.Start()
	for what := range e.applied { // the indexer signals each step; the last is this one
		if what == "meaning ready" {
			break
		}
	}
	t.Logf("the indexer embedded %d chunks in %v", x.Status().Meaning.Done, time.Since(started).Round(time.Millisecond))

	own := modelRanking(t, provider)
	var sem, hyb, kw, model float64
	firstSem := 0
	for _, q := range gradedQueries {
		s, _ := meaningFind(t, x, q.query, ModeSemantic, searchindex.Options{Limit: 5})
		h, _ := meaningFind(t, x, q.query, ModeHybrid, searchindex.Options{Limit: 5})
		k := keywordTitles(t, x, q.query)
		m := own(q.query)
		ns, nh, nk, nm := ndcg5(s, q.rel), ndcg5(h, q.rel), ndcg5(k, q.rel), ndcg5(m, q.rel)
		sem, hyb, kw, model = sem+ns, hyb+nh, kw+nk, model+nm
		if len(s) > 0 && q.rel[s[0]] == 2 {
			firstSem++
		}
		t.Logf("%-52q semantic %.2f hybrid %.2f keyword %.2f model %.2f  first %q", q.query, ns, nh, nk, nm, first(s))
		if nh < nk {
			t.Errorf("%q: hybrid nDCG@5 %.2f below keyword %.2f (hybrid %q, keyword %q)", q.query, nh, nk, h, k)
		}
	}
	n := float64(len(gradedQueries))
	sem, hyb, kw, model = sem/n, hyb/n, kw/n, model/n
	t.Logf("MEASURE real model %s, %d notes, %d queries: nDCG@5 semantic %.3f, hybrid %.3f, keyword %.3f, the model's own ranking %.3f; right note first (semantic) %d of %d",
		realModel, len(gradedNotes), len(gradedQueries), sem, hyb, kw, model, firstSem, len(gradedQueries))
	if math.Abs(sem-model) > 0.02 {
		t.Errorf("the bridge's semantic nDCG@5 %.3f is more than 0.02 from the model's own %.3f", sem, model)
	}
	if hyb < 0.95*sem {
		t.Errorf("hybrid nDCG@5 %.3f is below 0.95 × semantic %.3f", hyb, sem)
	}
}

// modelRanking embeds every chunk of the corpus straight through the
// provider and returns a ranking by the model's float32 vectors: a note
// scores its best chunk's cosine with the query, as the bridge does with
// its int8 copies.
func modelRanking(t *testing.T, p *embed.Client) func(query string) []string {
	t.Helper()
	type chunk struct {
		title string
		vec   []float32
	}
	var texts, titles []string
	for _, n := range gradedNotes {
		for _, c := range vecsearch.Split(n.title, n.body) {
			texts, titles = append(texts, c.Text), append(titles, n.title)
		}
	}
	started := time.Now()
	vecs, err := p.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(started)
	t.Logf("MEASURE real model %s: %d chunks in one request in %v (%.1f chunks/s)", realModel, len(texts), took.Round(time.Millisecond), float64(len(texts))/took.Seconds())
	chunks := make([]chunk, len(texts))
	for i := range texts {
		chunks[i] = chunk{titles[i], vecs[i]}
	}
	return func(query string) []string {
		q, err := p.EmbedQuery(context.Background(), query)
		if err != nil {
			t.Fatal(err)
		}
		best := map[string]float64{}
		for _, c := range chunks {
			if s := cosine(q, c.vec); s > best[c.title] || best[c.title] == 0 {
				best[c.title] = s
			}
		}
		ranked := make([]string, 0, len(best))
		for title := range best {
			ranked = append(ranked, title)
		}
		slices.SortFunc(ranked, func(a, b string) int {
			switch {
			case best[a] > best[b]:
				return -1
			case best[a] < best[b]:
				return 1
			}
			return 0
		})
		return ranked[:min(5, len(ranked))]
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// keywordTitles is the keyword leg's first five titles; no hit is an empty
// list (a paraphrase shares no word with its note).
func keywordTitles(t *testing.T, x *Indexer, query string) []string {
	t.Helper()
	r, err := x.SearchByMeaning(context.Background(), query, searchindex.Options{Limit: 5}, ModeKeyword)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, h := range r.Hits {
		titles = append(titles, h.Title)
	}
	return titles
}

func first(titles []string) string {
	if len(titles) == 0 {
		return ""
	}
	return titles[0]
}
