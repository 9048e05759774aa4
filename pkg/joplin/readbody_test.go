package joplin

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestGetRawBodies covers the body reader: announced and unannounced
// lengths, bodies over the bound, and a body cut short.
func TestGetRawBodies(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sized":
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body)
		case "/chunked":
			w.Write(body[:10])
			w.(http.Flusher).Flush() // no Content-Length: chunked
			w.Write(body[10:])
		case "/short":
			w.Header().Set("Content-Length", strconv.Itoa(len(body)+100))
			w.Write(body)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := newClient(t, srv.URL, 0)
	for _, path := range []string{"/sized", "/chunked"} {
		got, err := c.GetRaw(ctx, path)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s: %d bytes, %v", path, len(got), err)
		}
	}
	if _, err := c.GetRaw(ctx, "/short"); code(err) != domainerr.JoplinUnavailable {
		t.Fatalf("/short: %v, want JOPLIN_UNAVAILABLE (connection lost)", err)
	}
	for _, max := range []int64{int64(len(body)) - 1, int64(len(body))} {
		c.cfg.MaxResponseBytes = max
		for _, path := range []string{"/sized", "/chunked"} {
			got, err := c.GetRaw(ctx, path)
			if over := int64(len(body)) > max; over != (code(err) == domainerr.JoplinError) || !over && !bytes.Equal(got, body) {
				t.Fatalf("%s with bound %d: %d bytes, %v", path, max, len(got), err)
			}
		}
	}
}
