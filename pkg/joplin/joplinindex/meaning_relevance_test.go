package joplinindex

import (
	"math"
	"slices"
	"testing"

	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/joplin/vecsearch"
)

// relevanceNotes is a small corpus of personal notes: title, body,
// notebook.
var relevanceNotes = []struct{ title, body, notebook string }{
	{"Kitchen works", "# Budget\nAgreed with Sam: at most 14,000 euros for the remodel.\n# Schedule\nThe old stove goes in March; new worktop in oak.", "Home"},
	{"Kitchen shopping list", "oven gloves, dish soap, sponges", "Home"},
	{"Bathroom refit", "Tiles quote came in at 3,000 euros; plumber next week.", "Home"},
	{"Japan trip", "Flights to Tokyo in April, two nights in Kyoto, rail pass.", "Home"},
	{"GP appointment", "Checkup at the clinic on Tuesday at 9.", "Home"},
	{"Garden plans", "Tomatoes and seedlings in the greenhouse; compost delivery.", "Home"},
	{"Car", "Tyres need replacing; garage booked.", "Home"},
	{"School", "Meeting with the teacher about homework for our daughter.", "Home"},
	{"Guitar", "Chords for twenty minutes a day; lessons on Friday.", "Home"},
	{"Project Apollo", "Client deadline moved to the 15th; report due.", "Work"},
	{"Holiday budget", "Spend at most 2,000 euros on the vacation.", "Home"},
}

// relevanceQueries are paraphrases sharing few or no words with the notes
// they mean, with graded relevance (2: the answer, 1: related).
var relevanceQueries = []struct {
	query string
	rel   map[string]int
}{
	{"what did I decide about the kitchen renovation budget", map[string]int{"Kitchen works": 2, "Bathroom refit": 1, "Kitchen shopping list": 1}},
	{"how much money for redoing the cooking area", map[string]int{"Kitchen works": 2, "Bathroom refit": 1}},
	{"when is my physician visit", map[string]int{"GP appointment": 2}},
	{"vacation in japan", map[string]int{"Japan trip": 2, "Holiday budget": 1}},
	{"vehicle mechanic", map[string]int{"Car": 2}},
	{"growing vegetables", map[string]int{"Garden plans": 2}},
	{"piano or guitar practice", map[string]int{"Guitar": 2}},
	{"kids school teacher", map[string]int{"School": 2}},
	{"office colleague", map[string]int{"Project Apollo": 2}},
}

func seedRelevance(t *testing.T, e *env) {
	folders := map[string]any{}
	for _, n := range relevanceNotes {
		if folders[n.notebook] == nil {
			folders[n.notebook] = e.write(t, "POST", "/folders", map[string]any{"title": n.notebook})["id"]
		}
		e.write(t, "POST", "/notes", map[string]any{"title": n.title, "body": n.body, "parent_id": folders[n.notebook]})
	}
}

// startRelevance runs an indexer over the relevance corpus, every note
// embedded by the stub's concept embedder.
func startRelevance(t *testing.T) (*Indexer, *env) {
	e := newEnv(t)
	seedRelevance(t, e)
	x := e.startMeaning(t, newProvider(t), "concepts", nil)
	e.wait(t, "meaning ready")
	return x, e
}

// ndcg5 is the normalised discounted cumulative gain of the first five
// titles.
func ndcg5(titles []string, rel map[string]int) float64 {
	dcg := func(gains []int) float64 {
		s := 0.0
		for i, g := range gains[:min(5, len(gains))] {
			s += float64(g) / math.Log2(float64(i+2))
		}
		return s
	}
	var got, ideal []int
	for _, t := range titles {
		got = append(got, rel[t])
	}
	for _, g := range rel {
		ideal = append(ideal, g)
	}
	slices.Sort(ideal)
	slices.Reverse(ideal)
	return dcg(got) / dcg(ideal)
}

func TestGradedRelevance(t *testing.T) {
	x, _ := startRelevance(t)
	for _, mode := range []string{ModeSemantic, ModeHybrid} {
		total := 0.0
		for _, q := range relevanceQueries {
			titles, r := meaningFind(t, x, q.query, mode, searchindex.Options{Limit: 5})
			if r.Mode != mode {
				t.Fatalf("%s: answered in %s (%s)", q.query, r.Mode, r.Semantic)
			}
			if len(titles) == 0 || q.rel[titles[0]] != 2 {
				t.Errorf("%s %q: first %q, want the note it means", mode, q.query, titles)
			}
			total += ndcg5(titles, q.rel)
		}
		if mean := total / float64(len(relevanceQueries)); mean < 0.9 {
			t.Errorf("%s: mean nDCG@5 %.2f, want ≥ 0.9", mode, mean)
		}
	}
	// By keywords alone the paraphrases find nothing.
	for _, q := range relevanceQueries {
		if titles, _ := meaningFind(t, x, q.query, ModeKeyword, searchindex.Options{}); len(titles) != 0 {
			t.Errorf("keyword %q found %q", q.query, titles)
		}
	}
}

func TestHybridFusesBothLegs(t *testing.T) {
	x, _ := startRelevance(t)
	// "euros": three notes hold the word (keyword leg); by meaning the
	// money notes come first. The note both legs rank high comes first;
	// notes found by meaning alone follow those found by both.
	kw, _ := meaningFind(t, x, "euros", ModeKeyword, searchindex.Options{})
	sem, _ := meaningFind(t, x, "euros", ModeSemantic, searchindex.Options{})
	hyb, _ := meaningFind(t, x, "euros", ModeHybrid, searchindex.Options{})
	if len(kw) != 3 {
		t.Fatalf("keyword leg %q", kw)
	}
	for i, title := range hyb[:3] {
		if !slices.Contains(kw, title) {
			t.Errorf("hybrid rank %d is %q, found by one leg only, before a note found by both (%q, %q)", i+1, title, kw, sem)
		}
	}
	// The fused order is reciprocal rank fusion of the two legs' orders,
	// and differs from the semantic leg's here.
	if want := vecsearch.Fuse(kw, sem); !slices.Equal(hyb, want) || slices.Equal(want, sem) {
		t.Errorf("hybrid %q, want the fusion %q of keyword %q and semantic %q (distinct from semantic)", hyb, want, kw, sem)
	}
	if len(hyb) != len(sem) {
		t.Errorf("hybrid returned %d notes, the semantic leg %d (it holds all of them)", len(hyb), len(sem))
	}
	// Pages of the fused list do not overlap and cover it.
	var paged []string
	for page := range 4 {
		titles, _ := meaningFind(t, x, "euros", ModeHybrid, searchindex.Options{Limit: 3, Offset: 3 * page})
		paged = append(paged, titles[:min(3, len(titles))]...)
	}
	if !slices.Equal(paged, hyb[:min(12, len(hyb))]) {
		t.Errorf("pages %q, want %q", paged, hyb)
	}
}

func TestFiltersApplyToTheSemanticLeg(t *testing.T) {
	x, e := startRelevance(t)
	for _, mode := range []string{ModeSemantic, ModeHybrid} {
		if titles, _ := meaningFind(t, x, "office colleague notebook:home", mode, searchindex.Options{}); slices.Contains(titles, "Project Apollo") {
			t.Errorf("%s: notebook:home returned a Work note: %q", mode, titles)
		}
		if titles, _ := meaningFind(t, x, "office colleague notebook:work", mode, searchindex.Options{}); !slices.Equal(titles, []string{"Project Apollo"}) {
			t.Errorf("%s: notebook:work %q", mode, titles)
		}
		// A note is in one notebook: two notebook: filters mean either,
		// as in a keyword search.
		if titles, _ := meaningFind(t, x, "office colleague notebook:work notebook:home", mode, searchindex.Options{}); !slices.Contains(titles, "Project Apollo") {
			t.Errorf("%s: notebook:work notebook:home %q", mode, titles)
		}
		if titles, _ := meaningFind(t, x, "kitchen -oven", mode, searchindex.Options{}); slices.Contains(titles, "Kitchen shopping list") {
			t.Errorf("%s: an excluded word's note came back: %q", mode, titles)
		}
	}
	// A trashed note is left out unless asked for.
	var guitar string
	hits, _, _, _ := x.Search(t.Context(), "guitar", searchindex.Options{Limit: 1})
	guitar = hits[0].ID
	e.own(t, "DELETE", "/notes/"+guitar, nil)
	if titles, _ := meaningFind(t, x, "piano practice", ModeSemantic, searchindex.Options{}); slices.Contains(titles, "Guitar") {
		t.Errorf("a trashed note came back: %q", titles)
	}
	if titles, _ := meaningFind(t, x, "piano practice", ModeSemantic, searchindex.Options{IncludeTrashed: true}); len(titles) == 0 || titles[0] != "Guitar" {
		t.Errorf("include_trashed: %q", titles)
	}
}
