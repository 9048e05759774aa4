package joplinindex

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/testkit/eventwait"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

const token = "fake-joplin-token-0123456789"

type env struct {
	fake *joplinfake.Server
	// c is the indexer's client: its writes are notebridge's own; ext
	// writes as another Joplin client would.
	c, ext  *joplin.Client
	applied chan string
	path    string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvAt(t, t.TempDir(), t.Cleanup)
}

// newEnvAt serves a fresh fake; dir holds the token and index files.
func newEnvAt(t *testing.T, dir string, cleanup func(func())) *env {
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	cleanup(srv.Close)
	tf := filepath.Join(dir, "token")
	os.WriteFile(tf, []byte(token), 0o600)
	var clients [2]*joplin.Client
	for i := range clients {
		c, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tf, AvailabilityWait: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	return &env{fake: fake, c: clients[0], ext: clients[1], applied: make(chan string, 1000), path: filepath.Join(dir, "search", "index.db")}
}

// start runs an Indexer polling every 5 ms, idle or not; reconcile is the
// interval of both reconciliation passes (long by default, so tests drive
// it).
func (e *env) start(t *testing.T, reconcile time.Duration) *Indexer {
	t.Helper()
	x := New(e.c, Config{Path: e.path, Poll: 5 * time.Millisecond, IdlePoll: 5 * time.Millisecond, Reconcile: reconcile, FullReconcile: reconcile,
		Applied: func(what string) { e.applied <- what }})
	t.Cleanup(func() { x.Close() })
	x.Start()
	return x
}

// wait blocks until the indexer signals what.
func (e *env) wait(t *testing.T, what string) {
	t.Helper()
	timeout := eventwait.GiveUp(t)
	for {
		select {
		case got := <-e.applied:
			if got == what {
				return
			}
		case <-timeout:
			t.Fatalf("the indexer never signalled %q", what)
		}
	}
}

// write writes as another client would: the indexer is not told.
func (e *env) write(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	return writeWith(t, e.ext, method, path, body)
}

// own writes through the indexer's client, as notebridge's operations do.
func (e *env) own(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	return writeWith(t, e.c, method, path, body)
}

func writeWith(t *testing.T, c *joplin.Client, method, path string, body any) map[string]any {
	t.Helper()
	var out map[string]any
	var dst any = &out
	if method == "DELETE" {
		dst = nil
	}
	if err := c.Write(context.Background(), method, path, nil, body, dst); err != nil {
		t.Fatal(err)
	}
	return out
}

func find(t *testing.T, x *Indexer, query string) string {
	t.Helper()
	hits, state, ok, err := x.Search(context.Background(), query, searchindex.Options{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "fallback:" + state
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Title)
	}
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

func TestBuildEventsHooksReconcile(t *testing.T) {
	e := newEnv(t)
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	e.write(t, "POST", "/notes", map[string]any{"title": "alpha", "body": "kiwi banana", "parent_id": f["id"]})
	x := New(e.c, Config{Path: e.path})
	if got := find(t, x, "kiwi"); got != "fallback:idle" && got != "fallback:building" {
		t.Errorf("before the build: %s, want a fallback", got)
	}
	x.Close()
	x = e.start(t, time.Hour)
	e.wait(t, "built")
	if got := find(t, x, "kiwi notebook:work"); got != "alpha" {
		t.Fatalf("after the build: %q", got)
	}
	// A note written straight to Joplin arrives through /events.
	n2 := e.write(t, "POST", "/notes", map[string]any{"title": "beta", "body": "kiwi cherry", "parent_id": f["id"]})
	e.wait(t, "events")
	if got := find(t, x, "kiwi"); got != "alpha,beta" {
		t.Fatalf("after an external create: %q", got)
	}
	// Tag links are not in /events: the write observer (own write) or
	// the reconciliation pass brings them.
	tag := e.own(t, "POST", "/tags", map[string]any{"title": "fruit"})
	e.own(t, "POST", "/tags/"+tag["id"].(string)+"/notes", map[string]any{"id": n2["id"]})
	if got := find(t, x, "tag:fruit"); got != "beta" {
		t.Fatalf("after tagging through the hook: %q", got)
	}
	// Notebook rename: only the reconciliation pass (or a hook) sees it.
	e.write(t, "PUT", "/folders/"+f["id"].(string), map[string]any{"title": "Office"})
	if got := find(t, x, "notebook:office"); got != "" {
		t.Fatalf("rename seen without a reconciliation: %q", got)
	}
	if err := x.reconcile(context.Background(), x.servableIndex()); err != nil {
		t.Fatal(err)
	}
	if got := find(t, x, "notebook:office"); got != "alpha,beta" {
		t.Fatalf("after reconciliation: %q", got)
	}
	// Trash removes the note from results.
	e.write(t, "DELETE", "/notes/"+n2["id"].(string), nil)
	e.wait(t, "events")
	if got := find(t, x, "kiwi"); got != "alpha" {
		t.Fatalf("after trash: %q", got)
	}
	if st := x.Status(); st.State != Ready || st.Notes != 2 {
		t.Errorf("status %+v", st)
	}
}

func TestResumeWithoutRebuildAndRebuildWhenCorrupt(t *testing.T) {
	e := newEnv(t)
	e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	e.write(t, "POST", "/notes", map[string]any{"title": "alpha", "body": "kiwi"})
	x := e.start(t, time.Hour)
	e.wait(t, "built")
	x.Close()
	// Written while the bridge was down: the saved cursor brings it.
	e.write(t, "POST", "/notes", map[string]any{"title": "beta", "body": "kiwi"})
	x = e.start(t, time.Hour)
	e.wait(t, "resumed")
	e.wait(t, "events")
	if got := find(t, x, "kiwi"); got != "alpha,beta" {
		t.Fatalf("after resume: %q", got)
	}
	x.Close()
	if err := os.WriteFile(e.path, []byte(strings.Repeat("garbage!", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(e.path + "-wal")
	x = e.start(t, time.Hour)
	e.wait(t, "built")
	if got := find(t, x, "kiwi"); got != "alpha,beta" {
		t.Fatalf("after rebuilding a corrupt index: %q", got)
	}
}

func TestOutagePausesAndResumes(t *testing.T) {
	e := newEnv(t)
	e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	e.write(t, "POST", "/notes", map[string]any{"title": "alpha", "body": "kiwi"})
	e.fake.SetDown(true)
	x := e.start(t, time.Hour)
	e.wait(t, "paused")
	if got := find(t, x, "kiwi"); got != "fallback:paused" {
		t.Errorf("during the outage before a build: %q", got)
	}
	e.fake.SetDown(false)
	e.wait(t, "built")
	if got := find(t, x, "kiwi"); got != "alpha" {
		t.Errorf("after the outage: %q", got)
	}
}

// TestReconcileRunsOnItsOwn: the loop runs the reconciliation passes at
// their interval, so a notebook renamed elsewhere (absent from /events) is
// seen.
func TestReconcileRunsOnItsOwn(t *testing.T) {
	e := newEnv(t)
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	e.write(t, "POST", "/notes", map[string]any{"title": "alpha", "body": "kiwi", "parent_id": f["id"]})
	x := e.start(t, time.Nanosecond)
	e.wait(t, "built")
	e.write(t, "PUT", "/folders/"+f["id"].(string), map[string]any{"title": "Office"})
	// Drop earlier signals; of the next two passes, the second started
	// after the first ended, so after the rename.
	for len(e.applied) > 0 {
		<-e.applied
	}
	e.wait(t, "reconciled")
	e.wait(t, "reconciled")
	if got := find(t, x, "notebook:office"); got != "alpha" {
		t.Fatalf("after the loop's reconciliation: %q", got)
	}
}

// TestNothingOpensBeforeUse: an indexer that was never used creates no
// file (processes that never search pay nothing but package init).
func TestNothingOpensBeforeUse(t *testing.T) {
	e := newEnv(t)
	x := New(e.c, Config{Path: e.path})
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x.Start() // after Close: still nothing
	if _, err := os.Stat(filepath.Dir(e.path)); !os.IsNotExist(err) {
		t.Errorf("the index directory exists before any use: %v", err)
	}
	if st := x.Status(); st.State != Idle {
		t.Errorf("state %s", st.State)
	}
}

func TestCursorIsAStringOrANumber(t *testing.T) {
	for raw, want := range map[string]string{`"42"`: "42", `42`: "42", `"0"`: "0"} {
		var c cursor
		if err := json.Unmarshal([]byte(raw), &c); err != nil || string(c) != want {
			t.Errorf("%s: %q, %v", raw, c, err)
		}
	}
	var c cursor
	if err := json.Unmarshal([]byte(`{}`), &c); err == nil {
		t.Error("an object was taken for a cursor")
	}
}

// TestBuildFailureIsReported: a build that cannot finish (here: more notes
// than allowed) leaves the index failed with the reason; search falls back.
func TestBuildFailureIsReported(t *testing.T) {
	e := newEnv(t)
	e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	for _, title := range []string{"a", "b", "c"} {
		e.write(t, "POST", "/notes", map[string]any{"title": title, "body": "kiwi"})
	}
	x := New(e.c, Config{Path: e.path, Poll: 5 * time.Millisecond, MaxNotes: 2, Applied: func(w string) { e.applied <- w }})
	t.Cleanup(func() { x.Close() })
	x.Start()
	e.wait(t, "failed")
	if st := x.Status(); st.State != Failed || !strings.Contains(st.Error, "more than 2 notes") {
		t.Errorf("status %+v", st)
	}
	if got := find(t, x, "kiwi"); got != "fallback:failed" {
		t.Errorf("search during a failed build: %q", got)
	}
}
