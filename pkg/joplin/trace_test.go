package joplin

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// traceRecorder answers every request with {} and records whether the
// request's context carried an httptrace.ClientTrace.
type traceRecorder struct{ traced map[string]bool }

func (r *traceRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.traced[req.Method] = httptrace.ContextClientTrace(req.Context()) != nil
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{}`)), ContentLength: 2, Request: req, Header: http.Header{}}, nil
}

// TestOnlyWritesAreTraced: a write needs to know whether it was sent (to
// tell WRITE_OUTCOME_UNKNOWN from a safe retry); a read does not, so it
// pays for no trace.
func TestOnlyWritesAreTraced(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1", time.Second)
	rec := &traceRecorder{traced: map[string]bool{}}
	c.http.Transport = rec
	ctx := context.Background()
	if err := c.Get(ctx, "/notes/x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, http.MethodPost, "/notes", nil, map[string]any{"title": "t"}, nil); err != nil {
		t.Fatal(err)
	}
	if rec.traced[http.MethodGet] {
		t.Error("a read carries a client trace")
	}
	if !rec.traced[http.MethodPost] {
		t.Error("a write carries no client trace: its sent/not-sent outcome would be lost")
	}
}
