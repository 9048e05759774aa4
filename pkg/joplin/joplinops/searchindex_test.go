package joplinops_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

type indexHarness struct {
	fake *joplinfake.Server
	c    *joplin.Client
	// raw is a second client of the same Joplin that the index does not
	// observe: it seeds data behind the index's back (as another device
	// would), without starting the index.
	raw *joplin.Client
	ex  *executor.Executor
	x   *joplinindex.Indexer
}

// newIndexHarness runs the operations with a search index that polls
// /events only once an hour: after its build, only the write observer keeps
// it fresh.
func newIndexHarness(t *testing.T, built chan string) *indexHarness {
	t.Helper()
	return newMeaningHarness(t, built, joplinindex.MeaningConfig{})
}

// newMeaningHarness is newIndexHarness with search by meaning set up by m.
func newMeaningHarness(t *testing.T, built chan string, m joplinindex.MeaningConfig) *indexHarness {
	t.Helper()
	return newHarnessWith(t, built, joplinindex.Config{Meaning: m})
}

// newHarnessWith is newIndexHarness with cfg's Meaning and CatchUp.
func newHarnessWith(t *testing.T, built chan string, cfg joplinindex.Config) *indexHarness {
	t.Helper()
	m := cfg.Meaning
	fake, url, tf := joplinfake.Serve(t, token)
	c, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf, AvailabilityWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf, AvailabilityWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	x := joplinindex.New(c, joplinindex.Config{Path: filepath.Join(t.TempDir(), "index.db"), Poll: time.Hour, Reconcile: time.Hour,
		Applied: func(what string) { built <- what }, Meaning: m, CatchUp: cfg.CatchUp})
	t.Cleanup(func() { x.Close() })
	reg, err := registry.New(joplinops.Operations(c, joplinops.DefaultLimits, joplinops.WithSearchIndex(x),
		joplinops.WithReceiptDir(t.TempDir(), receipts.DefaultLimits))...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
	if err != nil {
		t.Fatal(err)
	}
	return &indexHarness{fake: fake, c: c, raw: raw, ex: ex, x: x}
}

func (h *indexHarness) call(t *testing.T, name string, args map[string]any) map[string]any {
	t.Helper()
	res, derr := h.try(name, args)
	if derr != nil {
		t.Fatalf("%s: %v", name, derr)
	}
	return res
}

func (h *indexHarness) try(name string, args map[string]any) (map[string]any, *domainerr.Error) {
	b, _ := json.Marshal(args)
	res, derr := h.ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, b)
	if derr != nil {
		return nil, derr
	}
	var out map[string]any
	json.Unmarshal(res, &out)
	return out, nil
}

// search returns the sorted titles found and the index field.
func (h *indexHarness) search(t *testing.T, query string) (string, string) {
	t.Helper()
	res := h.call(t, "search", map[string]any{"query": query})
	var titles []string
	for _, it := range res["results"].([]any) {
		titles = append(titles, it.(map[string]any)["title"].(string))
	}
	slices.Sort(titles)
	idx, _ := res["index"].(string)
	return strings.Join(titles, ","), idx
}

// TestOwnWritesAreFoundByTheNextSearch: every write tool updates the
// index before it answers (the index polls /events only hourly here).
func TestOwnWritesAreFoundByTheNextSearch(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	work := h.call(t, "create_notebook", map[string]any{"title": "Work"})["id"].(string)
	home := h.call(t, "create_notebook", map[string]any{"title": "Home"})["id"].(string)
	h.x.Start()
	for s := range signals {
		if s == "built" {
			break
		}
	}
	check := func(query, want string) {
		t.Helper()
		got, idx := h.search(t, query)
		if got != want || idx != "ready" {
			t.Errorf("search %q = %q (index %q), want %q from the index", query, got, idx, want)
		}
	}
	n := h.call(t, "create_note", map[string]any{"title": "Plan", "body": "kiwi harvest", "notebook_id": work})["id"].(string)
	check("kiwi", "Plan")
	h.call(t, "update_note", map[string]any{"id": n, "body": "mango harvest"})
	check("kiwi", "")
	check("mango", "Plan")
	h.call(t, "update_note", map[string]any{"id": n, "notebook_id": home})
	check("mango notebook:home", "Plan")
	h.call(t, "update_notebook", map[string]any{"id": home, "title": "House"})
	check("notebook:house", "Plan")
	tag := h.call(t, "create_tag", map[string]any{"title": "fruit"})["id"].(string)
	h.call(t, "tag_note", map[string]any{"note_id": n, "tag_id": tag})
	check("tag:fruit", "Plan")
	h.call(t, "update_tag", map[string]any{"id": tag, "title": "produce"})
	check("tag:produce", "Plan")
	h.call(t, "untag_note", map[string]any{"note_id": n, "tag_id": tag})
	check("tag:produce", "")
	h.call(t, "trash_note", map[string]any{"id": n})
	check("mango", "")
	res := h.call(t, "search", map[string]any{"query": "mango", "include_trashed": true})
	if items := res["results"].([]any); len(items) != 1 || items[0].(map[string]any)["trashed"] != true {
		t.Errorf("include_trashed: %v", res)
	}
	h.call(t, "restore_note", map[string]any{"id": n})
	check("mango", "Plan")
	h.call(t, "trash_notebook", map[string]any{"id": home})
	check("mango", "")
	h.call(t, "restore_notebook", map[string]any{"id": home})
	check("mango", "Plan")
	changes := []any{map[string]any{"note": n, "op": "replace", "find": "mango", "text": "papaya"}}
	digest := h.call(t, "preview_note_changes", map[string]any{"changes": changes})["plan_digest"].(string)
	receipt := h.call(t, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": digest})["receipt_id"].(string)
	check("mango", "")
	check("papaya", "Plan")
	h.call(t, "undo_note_changes", map[string]any{"receipt_id": receipt})
	check("papaya", "")
	check("mango", "Plan")
	if items := h.call(t, "search", map[string]any{"query": "harvest"})["results"].([]any); len(items) != 1 || items[0].(map[string]any)["snippet"] != "mango **harvest**" {
		t.Errorf("snippet: %v", items)
	}
	st := h.call(t, "joplin_status", map[string]any{})["index"].(map[string]any)
	if st["state"] != "ready" || st["notes"] != float64(1) {
		t.Errorf("joplin_status index %v", st)
	}
}

// TestSearchFallsBackAndRejectsBadQueries: before the index is built, and
// for filters it does not hold, Joplin's search answers and the result
// says so; a malformed query is INVALID_ARGUMENT naming the problem.
func TestSearchFallsBackAndRejectsBadQueries(t *testing.T) {
	h := newIndexHarness(t, make(chan string, 100))
	// The first search starts the index; with no saved index it builds in
	// the background and Joplin answers meanwhile.
	if _, idx := h.search(t, "kiwi"); idx != "idle" && idx != "building" {
		t.Errorf("first search: index %q, want idle or building", idx)
	}
	_, derr := h.try("search", map[string]any{"query": `"unclosed`})
	if derr == nil || derr.Code != domainerr.InvalidArgument || !strings.Contains(derr.Message, "unbalanced double quote") {
		t.Errorf("malformed query: %v", derr)
	}
	_, idx := h.search(t, "resource:image/png")
	if idx != "unsupported_query" {
		t.Errorf("unsupported filter: index %q", idx)
	}
	off := newHarness(t)
	var res map[string]any
	call(t, off, "search", map[string]any{"query": "kiwi"}, &res)
	if res["index"] != "off" {
		t.Errorf("without an index: %v", res)
	}
}

// TestWriteHooksAskJoplinNothingNew: with the index built, the scripted
// agent task of TestAgentTaskJoplinRequests costs 7 Joplin requests (the
// search is answered by the index; its catch-up poll of /events is counted
// apart, at most one): the write observer takes what the writes
// already know (update_note's answer, the tag created, the link made)
// instead of re-reading notes, notebooks and tags. A tag made elsewhere
// is read once when notebridge first links it; a deleted tag leaves the
// index.
func TestWriteHooksAskJoplinNothingNew(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	nb := h.call(t, "create_notebook", map[string]any{"title": "Projects"})["id"].(string)
	id := h.call(t, "create_note", map[string]any{"title": "Roadmap", "body": "old words", "notebook_id": nb})["id"].(string)
	h.x.Start()
	for s := range signals {
		if s == "built" {
			break
		}
	}
	before := len(h.fake.Requests())
	if got, idx := h.search(t, "Roadmap"); got != "Roadmap" || idx != "ready" {
		t.Fatalf("search = %q (index %q)", got, idx)
	}
	h.call(t, "get_note", map[string]any{"id": id})
	h.call(t, "update_note", map[string]any{"id": id, "body": "line one\nline 2"})
	tag := h.call(t, "create_tag", map[string]any{"title": "planning"})["id"].(string)
	h.call(t, "tag_note", map[string]any{"note_id": id, "tag_id": tag})
	h.call(t, "get_note", map[string]any{"id": id})
	var reqs []string
	polls := 0
	for _, r := range h.fake.Requests()[before:] {
		if r.Method == "GET" && r.Path == "/events" {
			polls++
			continue
		}
		reqs = append(reqs, r.Method+" "+r.Path)
	}
	if len(reqs) != 7 || polls > 1 {
		t.Fatalf("the agent task cost %d Joplin requests and %d /events polls with the index built, want 7 and ≤ 1:\n%s", len(reqs), polls, strings.Join(reqs, "\n"))
	}
	for query, want := range map[string]string{"line": "Roadmap", "old": "", "tag:planning": "Roadmap"} {
		if got, _ := h.search(t, query); got != want {
			t.Errorf("search %q = %q, want %q", query, got, want)
		}
	}

	var elsewhere struct{ ID string }
	if err := h.c.Write(own, "POST", "/tags", nil, map[string]any{"title": "outside"}, &elsewhere); err != nil {
		t.Fatal(err)
	}
	h.call(t, "tag_note", map[string]any{"note_id": id, "tag_id": elsewhere.ID})
	if got, _ := h.search(t, "tag:outside"); got != "Roadmap" {
		t.Errorf("a tag made elsewhere, then linked here: search = %q", got)
	}
	h.call(t, "untag_note", map[string]any{"note_id": id, "tag_id": elsewhere.ID})
	if got, _ := h.search(t, "tag:outside"); got != "" {
		t.Errorf("after untag_note: search = %q", got)
	}
	h.call(t, "update_tag", map[string]any{"id": tag, "title": "roadmapping"})
	if got, _ := h.search(t, "tag:roadmapping"); got != "Roadmap" {
		t.Errorf("after update_tag: search = %q", got)
	}
	h.call(t, "delete_tag", map[string]any{"id": tag})
	if got, _ := h.search(t, "tag:roadmapping"); got != "" {
		t.Errorf("after delete_tag: search = %q", got)
	}
}

// TestSearchCarriesEachHitOnce (issue 35): a search answer lists its hits
// once, under results (ChatGPT's deep research reads id, title and url
// there), each with the fields other clients use; no second list repeats
// them, from the index or from Joplin's own search.
func TestSearchCarriesEachHitOnce(t *testing.T) {
	signals := make(chan string, 100)
	h := newIndexHarness(t, signals)
	nb := h.call(t, "create_notebook", map[string]any{"title": "Home"})["id"].(string)
	n := h.call(t, "create_note", map[string]any{"title": "Plan", "body": "mango harvest", "notebook_id": nb})["id"].(string)
	shape := func(from string, res map[string]any) {
		t.Helper()
		keys := make([]string, 0, len(res))
		for k, v := range res {
			if _, list := v.([]any); list {
				keys = append(keys, k)
			}
		}
		hits, _ := res["results"].([]any)
		if len(keys) != 1 || len(hits) != 1 {
			t.Fatalf("%s: lists %v, want results only with one hit: %v", from, keys, res)
		}
		hit := hits[0].(map[string]any)
		if hit["id"] != n || hit["title"] != "Plan" || hit["url"] != "joplin://x-callback-url/openNote?id="+n || hit["notebook_id"] != nb {
			t.Errorf("%s: hit %v", from, hit)
		}
	}
	h.fake.ReindexSearch()
	shape("Joplin's search", h.call(t, "search", map[string]any{"query": "mango"}))
	h.x.Start()
	waitSignal(t, signals, "built")
	res := h.call(t, "search", map[string]any{"query": "mango"})
	if res["index"] != "ready" {
		t.Fatalf("the index did not answer: %v", res)
	}
	shape("the index", res)
}
