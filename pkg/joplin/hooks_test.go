package joplin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// TestObserversFollowOnlyAcceptedWrites: the observers run after a 2xx
// answer to a write, never after a read or a refused write, and are told
// what the write changed.
func TestObserversFollowOnlyAcceptedWrites(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refused" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"no"}`))
			return
		}
		w.Write([]byte(`{"id":"n1","title":"t"}`))
	}))
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(p, []byte(secret), 0o600)
	c, err := New(Config{BaseURL: srv.URL, TokenFile: p})
	if err != nil {
		t.Fatal(err)
	}
	var first, second []Write
	c.Observe(func(_ context.Context, w Write) { first = append(first, w) })
	c.Observe(func(_ context.Context, w Write) { second = append(second, w) })
	ctx := context.Background()
	c.Get(ctx, "/notes", nil, nil)
	c.Write(ctx, "PUT", "/notes/n1", nil, map[string]string{"title": "t"}, nil)
	c.Write(ctx, "DELETE", "/tags/x", nil, nil, nil)
	c.Write(ctx, "POST", "/refused", nil, nil, nil)
	want := []Write{
		{Kind: NoteSaved, ID: "n1", Answer: []byte(`{"id":"n1","title":"t"}`)},
		{Kind: TagDeleted, ID: "x", Answer: []byte(`{"id":"n1","title":"t"}`)},
	}
	if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(second, want) {
		t.Errorf("observed %+v and %+v, want %+v (the accepted PUT and DELETE, to every observer)", first, second, want)
	}
}

func TestClassify(t *testing.T) {
	answer := []byte(`{"id":"new"}`)
	for _, c := range []struct {
		method, path, body string
		want               Write
	}{
		{"POST", "/notes", `{}`, Write{Kind: NoteSaved, ID: "new"}},
		{"PUT", "/notes/n", `{}`, Write{Kind: NoteSaved, ID: "n"}},
		{"DELETE", "/notes/n", ``, Write{Kind: NoteTrashed, ID: "n"}},
		{"POST", "/folders", `{}`, Write{Kind: NotebookSaved, ID: "new"}},
		{"PUT", "/folders/f", `{}`, Write{Kind: NotebookSaved, ID: "f"}},
		{"DELETE", "/folders/f", ``, Write{Kind: NotebookTrashed, ID: "f"}},
		{"POST", "/tags", `{}`, Write{Kind: TagSaved, ID: "new"}},
		{"PUT", "/tags/t", `{}`, Write{Kind: TagSaved, ID: "t"}},
		{"DELETE", "/tags/t", ``, Write{Kind: TagDeleted, ID: "t"}},
		{"POST", "/tags/t/notes", `{"id":"n"}`, Write{Kind: TagLinked, ID: "t", NoteID: "n"}},
		{"DELETE", "/tags/t/notes/n", ``, Write{Kind: TagUnlinked, ID: "t", NoteID: "n"}},
		{"POST", "/resources", ``, Write{Kind: ResourceSaved, ID: "new"}},
		{"PUT", "/resources/r", ``, Write{Kind: ResourceSaved, ID: "r"}},
		{"DELETE", "/resources/r", ``, Write{Kind: ResourceDeleted, ID: "r"}},
		{"POST", "/services/x", ``, Write{ID: "x"}},
	} {
		got := classify(request{method: c.method, path: c.path, body: []byte(c.body)}, answer)
		got.Answer = nil
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %+v, want %+v", c.method, c.path, got, c.want)
		}
	}
}

type testGuard struct {
	checks, lost atomic.Int32
	err          error
}

func (g *testGuard) Check(context.Context) error { g.checks.Add(1); return g.err }
func (g *testGuard) Lost()                       { g.lost.Add(1) }

func TestGuardVetsRequestsButPingAndItsOwn(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`JoplinClipperServer`))
	}))
	c := newClient(t, srv.URL, 0)
	g := &testGuard{err: errors.New("not the same Joplin")}
	c.SetGuard(g)
	ctx := context.Background()
	if err := c.Get(ctx, "/notes", nil, nil); err != g.err {
		t.Errorf("guarded read: %v, want the guard's error", err)
	}
	if err := c.Write(ctx, "POST", "/notes", nil, nil, nil); err != g.err {
		t.Errorf("guarded write: %v, want the guard's error", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests passed a failing guard", hits.Load())
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	c.Get(Unguarded(ctx), "/notes", nil, nil) // the guard's own request
	if g.checks.Load() != 2 || hits.Load() != 2 {
		t.Errorf("checks %d, hits %d; want 2 and 2", g.checks.Load(), hits.Load())
	}
	srv.Close()
	g.err = nil
	c2 := newClient(t, srv.URL, 10*time.Millisecond)
	c2.SetGuard(g)
	c2.Get(ctx, "/notes", nil, nil)
	if g.lost.Load() == 0 {
		t.Error("an unreachable Joplin was not reported to the guard")
	}
}
