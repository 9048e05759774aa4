//go:build integration

package joplinops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// oracleQueries are compared, as sets of note ids, between notebridge's
// index and Joplin's own /search after a reindex restart.
var oracleQueries = []string{
	`kiwi`, `KIWI`, `mango papaya`, `"green tea"`, `"tea green"`, `straw*`, `straw`, `café`, `cafe`,
	`kiwi -mango`, `title:budget`, `body:budget`, `title:"weekly report"`, `-body:kiwi mango`,
	`any:1 papaya lychee`, `tag:fruit`, `tag:fr*`, `tag:fruit tag:urgent`, `tag:fruit -tag:urgent`,
	`any:1 tag:urgent tag:archive`, `notebook:projects`, `notebook:work`, `notebook:work kiwi`,
	`-notebook:work kiwi`, `type:todo`, `type:todo kiwi`, `iscompleted:1`, `iscompleted:0 kiwi`,
	`created:20200101 kiwi`, `kiwi report`, `"weekly report"`, `número`, `2026`, `plan-b`,
	`"straw hat"`, `iscompleted:0`, `-tag:*`, `updated:day-1 mango`, `-kiwi`,
}

type fixture struct {
	title, body, notebook string
	tags                  []string
	todo, done            bool
}

var oracleNotes = []fixture{
	{"Kiwi notes", "kiwi and mango in the garden", "Work", []string{"fruit"}, false, false},
	{"Budget 2026", "the budget for the kiwi farm", "Projects", []string{"urgent"}, false, false},
	{"Weekly report", "weekly report: green tea sales, strawberry yields", "Projects", []string{"fruit", "urgent"}, false, false},
	{"Tea", "Green Tea and black tea; tea green is not a phrase here", "Home", nil, false, false},
	{"Café list", "visit the café, número cinco", "Home", []string{"archive"}, false, false},
	{"Papaya", "papaya mango smoothie", "Work", []string{"fruit"}, true, false},
	{"Lychee task", "buy lychee and kiwi", "Home", nil, true, true},
	{"Strawberries", "straw hats and strawberries; plan-b for rain", "Work", []string{"fruit", "archive"}, true, false},
	{"Mango only", "mango mango mango", "Projects", nil, false, false},
	{"Report draft", "draft of the report about kiwi budget", "Work", nil, false, false},
}

// seedOracle creates the notebooks (Projects inside Work), tags and notes
// through Joplin's REST API and returns the note ids by title.
func seedOracle(t *testing.T, c *joplin.Client) map[string]string {
	ctx := context.Background()
	folders := map[string]string{}
	for _, f := range []struct{ title, parent string }{{"Work", ""}, {"Projects", "Work"}, {"Home", ""}} {
		var out struct {
			ID string `json:"id"`
		}
		must(t, c.Write(ctx, "POST", "/folders", nil, map[string]any{"title": f.title, "parent_id": folders[f.parent]}, &out))
		folders[f.title] = out.ID
	}
	ids := map[string]string{}
	for _, n := range oracleNotes {
		req := map[string]any{"title": n.title, "body": n.body, "parent_id": folders[n.notebook]}
		if n.todo {
			req["is_todo"] = 1
		}
		if n.done {
			req["todo_completed"] = time.Now().UnixMilli()
		}
		if len(n.tags) > 0 {
			req["tags"] = strings.Join(n.tags, ",")
		}
		var out struct {
			ID string `json:"id"`
		}
		must(t, c.Write(ctx, "POST", "/notes", nil, req, &out))
		ids[n.title] = out.ID
	}
	return ids
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// joplinSearch returns the sorted ids Joplin's own /search finds.
func joplinSearchIDs(t *testing.T, c *joplin.Client, query string) []string {
	items, err := joplin.ListAll[struct {
		ID string `json:"id"`
	}](context.Background(), c, "/search", url.Values{"query": {query}, "fields": {"id"}}, 10_000)
	must(t, err)
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	slices.Sort(ids)
	return ids
}

type indexedBridge struct {
	x       *joplinindex.Indexer
	ex      *executor.Executor
	signals chan string
}

func newIndexedBridge(t *testing.T, c *joplin.Client, path string) *indexedBridge {
	return newIndexedBridgeWith(t, c, joplinindex.Config{Path: path})
}

// newMeaningBridge is newIndexedBridge with search by meaning set up by m.
func newMeaningBridge(t *testing.T, c *joplin.Client, path string, m joplinindex.MeaningConfig) *indexedBridge {
	return newIndexedBridgeWith(t, c, joplinindex.Config{Path: path, Meaning: m})
}

// newIndexedBridgeWith is newIndexedBridge with the indexer configured by
// cfg (Applied is set here).
func newIndexedBridgeWith(t *testing.T, c *joplin.Client, cfg joplinindex.Config) *indexedBridge {
	b := &indexedBridge{signals: make(chan string, 10_000)}
	cfg.Applied = func(s string) { b.signals <- s }
	b.x = joplinindex.New(c, cfg)
	t.Cleanup(func() { b.x.Close() })
	reg, err := registry.New(joplinops.Operations(c, joplinops.DefaultLimits, joplinops.WithSearchIndex(b.x))...)
	must(t, err)
	b.ex, err = executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
	must(t, err)
	return b
}

// waitFor blocks until the indexer signals one of want.
func (b *indexedBridge) waitFor(t *testing.T, want ...string) string {
	t.Helper()
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case s := <-b.signals:
			if slices.Contains(want, s) {
				return s
			}
		case <-timeout:
			t.Fatalf("no %v from the indexer", want)
		}
	}
}

func (b *indexedBridge) search(t *testing.T, query string) ([]string, string) {
	t.Helper()
	res, derr := b.ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "search", []byte(fmt.Sprintf(`{"query":%q,"limit":100}`, query)))
	if derr != nil {
		t.Fatalf("search %q: %v", query, derr)
	}
	var out struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"results"`
		Index string `json:"index"`
	}
	mustJSON(t, res, &out)
	var ids []string
	for _, it := range out.Items {
		ids = append(ids, it.ID)
	}
	slices.Sort(ids)
	return ids, out.Index
}

// TestRealJoplinSearchOracle: after a reindex restart of Joplin, every
// oracle query finds the same notes through notebridge's index as through
// Joplin's own search.
func TestRealJoplinSearchOracle(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	c := newClient(t, j)
	titles := seedOracle(t, c)
	j.Restart(t)
	// Joplin indexes in the background after its start: wait until its
	// search sees the last note seeded.
	for deadline := time.Now().Add(2 * time.Minute); len(joplinSearchIDs(t, c, "draft")) == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Joplin's search never saw the seeded notes")
		}
	}
	b := newIndexedBridge(t, c, filepath.Join(t.TempDir(), "index.db"))
	b.x.Start()
	b.waitFor(t, "built")
	byID := map[string]string{}
	for title, id := range titles {
		byID[id] = title
	}
	names := func(ids []string) string {
		var out []string
		for _, id := range ids {
			out = append(out, byID[id])
		}
		return strings.Join(out, " | ")
	}
	same := 0
	for _, q := range oracleQueries {
		want := joplinSearchIDs(t, c, q)
		got, idx := b.search(t, q)
		if idx != "ready" {
			t.Fatalf("%q answered with index %q", q, idx)
		}
		if slices.Equal(got, want) {
			same++
			t.Logf("same  %-32q %d notes", q, len(got))
			continue
		}
		t.Errorf("query %q: notebridge [%s], Joplin [%s]", q, names(got), names(want))
	}
	t.Logf("%d of %d queries return the same notes", same, len(oracleQueries))
}

// TestRealJoplinSearchFreshness: a write through notebridge is found by
// the next call, a note created straight through Joplin's REST API within
// 2 s, trashing removes it, and a restarted bridge resumes without a
// rebuild.
func TestRealJoplinSearchFreshness(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	c := newClient(t, j)
	seedOracle(t, c)
	path := filepath.Join(t.TempDir(), "index.db")
	b := newIndexedBridge(t, c, path)
	b.x.Start()
	b.waitFor(t, "built")
	ctx := context.Background()

	var nb struct {
		ID string `json:"id"`
	}
	must(t, c.Write(ctx, "POST", "/folders", nil, map[string]any{"title": "Fresh"}, &nb))
	res, derr := b.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "create_note", []byte(fmt.Sprintf(`{"title":"Own","body":"quokka","notebook_id":%q}`, nb.ID)))
	if derr != nil {
		t.Fatal(derr)
	}
	var own struct {
		ID string `json:"id"`
	}
	mustJSON(t, res, &own)
	if got, idx := b.search(t, "quokka"); !slices.Equal(got, []string{own.ID}) || idx != "ready" {
		t.Fatalf("own write not found by the next call: %v (index %s)", got, idx)
	}

	var ext struct {
		ID string `json:"id"`
	}
	start := time.Now()
	must(t, c.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "External", "body": "wombat", "parent_id": nb.ID}, &ext))
	for {
		if got, _ := b.search(t, "wombat"); slices.Equal(got, []string{ext.ID}) {
			break
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("an external create was not found within 2 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("external create found after %v", time.Since(start).Round(time.Millisecond))

	if _, derr := b.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "trash_note", []byte(fmt.Sprintf(`{"id":%q}`, own.ID))); derr != nil {
		t.Fatal(derr)
	}
	if got, _ := b.search(t, "quokka"); len(got) != 0 {
		t.Fatalf("trashed note still found: %v", got)
	}

	b.x.Close()
	start = time.Now()
	b2 := newIndexedBridge(t, c, path)
	b2.x.Start()
	if s := b2.waitFor(t, "resumed", "built"); s != "resumed" {
		t.Fatalf("a restarted bridge rebuilt its index")
	}
	t.Logf("resumed in %v", time.Since(start).Round(time.Millisecond))
	if got, idx := b2.search(t, "wombat"); !slices.Equal(got, []string{ext.ID}) || idx != "ready" {
		t.Fatalf("after resume: %v (index %s)", got, idx)
	}
}

func newClient(t *testing.T, j *joplintc.Joplin) *joplin.Client {
	c, err := joplin.New(joplin.Config{BaseURL: j.URL(), TokenFile: j.TokenFile, AvailabilityWait: 10 * time.Second})
	must(t, err)
	return c
}

func mustJSON(t *testing.T, b []byte, out any) {
	t.Helper()
	must(t, json.Unmarshal(b, out))
}

// TestRealJoplinSearchFindsAttachmentOCR: OCR text set on resources through
// the Data API (as the desktop app's OCR does, or a sync brings it) finds
// the notes linking to them, and the hit names the resource; text that
// arrives after the build is picked up by the full reconciliation pass
// (hourly by default; every second here).
func TestRealJoplinSearchFindsAttachmentOCR(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	c := newClient(t, j)
	ctx := context.Background()
	b := newIndexedBridgeWith(t, c, joplinindex.Config{Path: filepath.Join(t.TempDir(), "index.db"), Reconcile: time.Second, FullReconcile: time.Second})
	call := func(name, args string) map[string]any {
		t.Helper()
		res, derr := b.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, name, []byte(args))
		if derr != nil {
			t.Fatalf("%s: %v", name, derr)
		}
		var out map[string]any
		mustJSON(t, res, &out)
		return out
	}
	nb := call("create_notebook", `{"title":"Scans"}`)["id"].(string)
	upload := func(name string) string {
		return call("create_resource", fmt.Sprintf(`{"title":%q,"filename":"%s.pdf","data_base64":"JVBERi0xLjQK"}`, name, name))["id"].(string)
	}
	a, other := upload("a"), upload("b")
	// OCR text comes from elsewhere (the desktop app, a sync): written
	// through a client the index does not observe.
	raw := newClient(t, j)
	setOCR := func(id, text string) {
		must(t, raw.Write(ctx, "PUT", "/resources/"+id, nil, map[string]any{"ocr_text": text, "ocr_status": 2}, nil))
	}
	setOCR(a, "Invoice 4711 for plumbing")
	note := call("create_note", fmt.Sprintf(`{"title":"Paperwork","notebook_id":%q,"body":"![](:/%s)\n[](:/%s)\n"}`, nb, a, other))["id"].(string)
	b.x.Start()
	b.waitFor(t, "built")
	// The first write started the index, so the note may have come after
	// the build began: it is then indexed from /events within a poll.
	waitHit := func(query, attachment string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			items := call("search", fmt.Sprintf(`{"query":%q}`, query))["results"].([]any)
			if len(items) == 1 && items[0].(map[string]any)["id"] == note && items[0].(map[string]any)["attachment"] == attachment {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("search %q: no hit naming attachment %s within 30 s: %v", query, attachment, items)
			}
		}
	}
	waitHit("invoice", a)
	// Joplin records a change event some milliseconds after the write;
	// once a reconciliation pass is over, the note's events are applied,
	// so only that pass can find the OCR text set next.
	b.waitFor(t, "reconciled")
	setOCR(other, "Warranty card")
	waitHit("warranty", other)
}
