package joplin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestOnWriteFollowsOnlyAcceptedWrites: the hook runs after a 2xx answer
// to a write, never after a read or a refused write.
func TestOnWriteFollowsOnlyAcceptedWrites(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refused" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"no"}`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(p, []byte(secret), 0o600)
	var writes atomic.Int32
	c, err := New(Config{BaseURL: srv.URL, TokenFile: p, OnWrite: func() { writes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c.Get(ctx, "/notes", nil, nil)
	c.Write(ctx, "PUT", "/notes/x", nil, map[string]string{"title": "t"}, nil)
	c.Write(ctx, "DELETE", "/tags/x", nil, nil, nil)
	c.Write(ctx, "POST", "/refused", nil, nil, nil)
	if n := writes.Load(); n != 2 {
		t.Errorf("OnWrite ran %d times, want 2 (the accepted PUT and DELETE)", n)
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
