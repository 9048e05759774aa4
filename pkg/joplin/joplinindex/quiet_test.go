package joplinindex

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

// TestPollBacksOffWhenIdle: the wait doubles per idle poll from the active
// interval up to the idle one, and a search or a write resets it.
func TestPollBacksOffWhenIdle(t *testing.T) {
	var got []time.Duration
	for i := range 8 {
		got = append(got, pollWait(time.Second, 30*time.Second, i))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("waits %v, want %v seconds", got, want)
		}
	}
	if w := pollWait(time.Second, 30*time.Second, 1000); w != 30*time.Second {
		t.Errorf("after many idle polls: %v", w)
	}
	x := &Indexer{wake: make(chan struct{}, 1)}
	x.idlePolls.Store(7)
	x.touch()
	x.touch() // a second touch before the loop woke does not block
	if x.idlePolls.Load() != 0 || len(x.wake) != 1 {
		t.Errorf("touch: idle polls %d, wake %d", x.idlePolls.Load(), len(x.wake))
	}
}

// TestSearchCatchesUpWhenIdle: with the loop idle (it would poll only in
// an hour), a search first has /events polled, so a note written
// elsewhere a moment before is found.
func TestSearchCatchesUpWhenIdle(t *testing.T) {
	e := newEnv(t)
	e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	x := New(e.c, Config{Path: e.path, Poll: time.Hour, CatchUp: time.Nanosecond, Applied: func(what string) { e.applied <- what }})
	t.Cleanup(func() { x.Close() })
	x.Start()
	e.wait(t, "built")
	e.write(t, "POST", "/notes", map[string]any{"title": "alpha", "body": "kiwi"})
	if got := find(t, x, "kiwi"); got != "alpha" {
		t.Fatalf("search right after an external write: %q", got)
	}
}

// TestSearchByMeaningCatchesUpWhenIdle: a search in any mode through
// SearchByMeaning (the tool's path once embeddings are set) polls Joplin
// first, as Search does, so an idle index does not answer from before a
// change made elsewhere.
func TestSearchByMeaningCatchesUpWhenIdle(t *testing.T) {
	e := newEnv(t)
	e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	x := New(e.c, Config{Path: e.path, Poll: time.Hour, CatchUp: time.Nanosecond, Applied: func(what string) { e.applied <- what }})
	t.Cleanup(func() { x.Close() })
	x.Start()
	e.wait(t, "built")
	e.write(t, "POST", "/notes", map[string]any{"title": "alpha", "body": "kiwi"})
	res, err := x.SearchByMeaning(context.Background(), "kiwi", searchindex.Options{Limit: 10}, ModeKeyword)
	if err != nil || !res.OK || len(res.Hits) != 1 || res.Hits[0].Title != "alpha" {
		t.Fatalf("search by meaning right after an external write: %+v, %v", res, err)
	}
}

// TestRestartAsksJoplinLittle: a restart over a saved index when nothing
// changed costs one /events poll and the light check of notebooks and
// tags (one request each), however many tags there are; the sync
// generation it already caught up with asks nothing.
func TestRestartAsksJoplinLittle(t *testing.T) {
	e := newEnv(t)
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	for i := range 20 {
		tag := e.write(t, "POST", "/tags", map[string]any{"title": "tag" + string(rune('a'+i))})
		n := e.write(t, "POST", "/notes", map[string]any{"title": "n", "body": "kiwi", "parent_id": f["id"]})
		e.write(t, "POST", "/tags/"+tag["id"].(string)+"/notes", map[string]any{"id": n["id"]})
	}
	gen := func() (int64, bool) { return 7, true }
	start := func() *Indexer {
		x := New(e.c, Config{Path: e.path, Poll: time.Hour, SyncGeneration: gen, Applied: func(what string) { e.applied <- what }})
		x.Start()
		return x
	}
	x := start()
	e.wait(t, "built") // it read the tag links, and keeps the generation
	x.Close()
	for len(e.applied) > 0 {
		<-e.applied
	}
	before := len(e.fake.Requests())
	x = start()
	t.Cleanup(func() { x.Close() })
	e.wait(t, "resumed")
	e.wait(t, "checked")
	reqs := e.fake.Requests()[before:]
	for _, r := range reqs {
		t.Logf("%s %s", r.Method, r.Path)
	}
	if len(reqs) != 3 {
		t.Fatalf("a restart with nothing changed cost %d Joplin requests, want 3 (/events, /folders, /tags)", len(reqs))
	}
}

// TestStopDuringOpenLogsNoError: a process that stops (its context ends)
// while the index is opening logs nothing at ERROR: nothing failed.
func TestStopDuringOpenLogsNoError(t *testing.T) {
	e := newEnv(t)
	var logs strings.Builder
	x := New(e.c, Config{Path: e.path, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ix := x.open(ctx); ix != nil {
		ix.Close()
		t.Fatal("the index opened with an ended context")
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("logged: %s", logs.String())
	}
}

// TestSearchRightAfterABackgroundPollCatchesUp (issue 35): a change made
// just after a background poll is seen by the search that follows, even
// within the catch-up window (here an hour, so the old rule, which let
// any recent poll spare the search, missed it every time).
func TestSearchRightAfterABackgroundPollCatchesUp(t *testing.T) {
	e := newEnv(t)
	e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	x := New(e.c, Config{Path: e.path, Poll: time.Hour, CatchUp: time.Hour, Applied: func(what string) { e.applied <- what }})
	t.Cleanup(func() { x.Close() })
	x.Start()
	e.wait(t, "built") // the build counts as a poll, just now
	e.write(t, "POST", "/notes", map[string]any{"title": "alpha", "body": "kiwi"})
	if got := find(t, x, "kiwi"); got != "alpha" {
		t.Fatalf("search right after a background poll and an external write: %q", got)
	}
	// A second search within the window rides on the first one's poll.
	before := len(e.fake.Requests())
	if got := find(t, x, "kiwi"); got != "alpha" {
		t.Fatalf("second search: %q", got)
	}
	if n := len(e.fake.Requests()) - before; n != 0 {
		t.Errorf("a second search right after a caught-up one cost %d Joplin requests, want 0", n)
	}
}
