package joplin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestBreakerFailsWaitingCallsAtOnce: once a call's availability wait ran
// out with Joplin down, the next call is a probe that tries once, every
// call meanwhile fails at once with JOPLIN_UNAVAILABLE and a retry hint,
// without reaching Joplin, and the first answer closes the breaker. The
// test follows requests as they arrive, never the clock.
func TestBreakerFailsWaitingCallsAtOnce(t *testing.T) {
	var mode atomic.Int32 // 0 down (the connection is dropped), 1 hold the probe, 2 up
	var arrived atomic.Int32
	probeIn, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := arrived.Add(1)
		switch mode.Load() {
		case 2:
			w.Write([]byte(`{"items":[],"has_more":false}`))
			return
		case 1:
			if n == 1 {
				probeIn <- struct{}{}
				<-release
			}
		}
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	var released atomic.Bool
	unhold := func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	}
	t.Cleanup(unhold) // before srv.Close, which waits for the held probe
	c := newClient(t, srv.URL, 100*time.Millisecond)
	ctx := context.Background()

	// The first call spends its wait: several tries, then the breaker opens.
	if err := c.Get(ctx, "/notes", nil, nil); code(err) != domainerr.JoplinUnavailable {
		t.Fatalf("first call: %v", err)
	}
	if arrived.Load() < 2 {
		t.Fatalf("the first call tried %d times; it should retry within its wait", arrived.Load())
	}

	// The probe is held in Joplin; waiting calls fail at once, unsent.
	arrived.Store(0)
	mode.Store(1)
	probeDone := make(chan error, 1)
	go func() { probeDone <- c.Get(ctx, "/notes", nil, nil) }()
	<-probeIn
	for i := 0; i < 5; i++ {
		err := c.Write(ctx, http.MethodPost, "/notes", nil, map[string]string{"title": "x"}, nil)
		de, ok := domainerr.As(err)
		if !ok || de.Code != domainerr.JoplinUnavailable || !de.Retryable || de.Details["retry_after_seconds"] != 1 {
			t.Fatalf("a call while the probe runs: %v", err)
		}
	}
	if n := arrived.Load(); n != 1 {
		t.Fatalf("%d requests reached Joplin while it was known down; want only the probe's", n)
	}
	unhold()
	if err := <-probeDone; code(err) != domainerr.JoplinUnavailable {
		t.Fatalf("probe: %v", err)
	}
	if n := arrived.Load(); n != 1 {
		t.Fatalf("the probe tried %d times; it should try once", n)
	}

	// Joplin answers again: the next call (a probe) succeeds and closes it.
	mode.Store(2)
	for i := 0; i < 3; i++ {
		if err := c.Get(ctx, "/notes", nil, nil); err != nil {
			t.Fatalf("after recovery, call %d: %v", i, err)
		}
	}
}
