package joplin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

const secret = "supersecrettoken0123456789"

func newClient(t *testing.T, base string, wait time.Duration) *Client {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(p, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{BaseURL: base, TokenFile: p, AvailabilityWait: wait, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func code(err error) domainerr.Code {
	if de, ok := domainerr.As(err); ok {
		return de.Code
	}
	return ""
}

func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	b, _ := json.Marshal(err)
	for _, s := range []string{err.Error(), string(b)} {
		if strings.Contains(s, secret) || strings.Contains(s, "token=") || strings.Contains(s, "/usr/lib") || strings.Contains(s, "127.0.0.1") {
			t.Fatalf("error leaks secret, URL or path: %s", s)
		}
	}
}

func TestStatusClassification(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("token") != secret {
			w.WriteHeader(403)
			fmt.Fprint(w, `{"error":"Invalid \"token\" parameter"}`)
			return
		}
		switch r.URL.Path {
		case "/notes/missing":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"Not Found"}`)
		case "/boom":
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":"SQLITE_CONSTRAINT: failed at /usr/lib/node_modules/joplin/db.js:12\nError: x\n    at Foo (/usr/lib/node_modules/joplin/x.js:1:2)"}`)
		default:
			fmt.Fprint(w, `{"ok":true}`)
		}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, 0)
	ctx := context.Background()

	err := c.Get(ctx, "/notes/missing", nil, nil)
	if code(err) != domainerr.NotFound {
		t.Errorf("404: %v", err)
	}
	err = c.Get(ctx, "/boom", nil, nil)
	if code(err) != domainerr.JoplinError || !IsStatus(err, 500) {
		t.Errorf("500: %v", err)
	}
	assertNoSecret(t, err)
	var ae *APIError
	if !errors.As(err, &ae) || strings.Contains(ae.Message, "/usr/lib") || !strings.HasPrefix(ae.Message, "SQLITE_CONSTRAINT") {
		t.Errorf("sanitized message: %q", ae.Message)
	}

	bad, _ := New(Config{BaseURL: srv.URL, TokenFile: writeTemp(t, "wrong-token")})
	err = bad.Get(ctx, "/folders", nil, nil)
	if code(err) != domainerr.JoplinAuthFailed {
		t.Errorf("403: %v", err)
	}
	assertNoSecret(t, err)

	noFile, _ := New(Config{BaseURL: srv.URL})
	if code(noFile.Get(ctx, "/folders", nil, nil)) != domainerr.JoplinAuthFailed {
		t.Error("missing token file not reported")
	}
}

func writeTemp(t *testing.T, s string) string {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte(s), 0o600)
	return p
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestUnavailableIsRetryableWithinTheWait(t *testing.T) {
	c := newClient(t, closedPort(t), 600*time.Millisecond)
	start := time.Now()
	err := c.Get(context.Background(), "/folders", nil, nil)
	elapsed := time.Since(start)
	de, ok := domainerr.As(err)
	if !ok || de.Code != domainerr.JoplinUnavailable || !de.Retryable {
		t.Fatalf("want retryable JOPLIN_UNAVAILABLE, got %v", err)
	}
	if elapsed > 3*time.Second {
		t.Fatalf("wait not bounded: %v", elapsed)
	}
	assertNoSecret(t, err)
	// A write that never reached Joplin is also JOPLIN_UNAVAILABLE, not unknown.
	err = c.Write(context.Background(), "POST", "/notes", nil, map[string]string{"title": "x"}, nil)
	if code(err) != domainerr.JoplinUnavailable {
		t.Fatalf("unsent write: %v", err)
	}
}

// dropServer accepts connections, reads one request fully, counts it, and
// closes the connection without answering.
type dropServer struct {
	url   string
	l     net.Listener
	wg    sync.WaitGroup
	count atomic.Int32
}

func dropAfterRequest(t *testing.T) *dropServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dropServer{url: "http://" + l.Addr().String(), l: l}
	t.Cleanup(func() { l.Close() })
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				d.count.Add(1)
			}()
		}
	}()
	return d
}

// requests stops the server, waits until every accepted connection has been
// handled, and returns how many requests arrived.
func (d *dropServer) requests() int32 {
	d.l.Close()
	d.wg.Wait()
	return d.count.Load()
}

func TestWriteIsSentOnceAndUncertainOutcomeIsReported(t *testing.T) {
	srv := dropAfterRequest(t)
	c := newClient(t, srv.url, 2*time.Second)
	err := c.Write(context.Background(), "POST", "/notes", nil, map[string]string{"title": "x"}, nil)
	de, ok := domainerr.As(err)
	if !ok || de.Code != domainerr.WriteOutcomeUnknown || de.Retryable {
		t.Fatalf("want non-retryable WRITE_OUTCOME_UNKNOWN, got %v", err)
	}
	if n := srv.requests(); n != 1 {
		t.Fatalf("write reached the server %d times, want exactly 1", n)
	}
	assertNoSecret(t, err)
	// A read against the same fault is retried, then reported as unavailable.
	srv2 := dropAfterRequest(t)
	c2 := newClient(t, srv2.url, 400*time.Millisecond)
	if err := c2.Get(context.Background(), "/folders", nil, nil); code(err) != domainerr.JoplinUnavailable {
		t.Fatalf("read: %v", err)
	}
	if n := srv2.requests(); n < 2 {
		t.Fatalf("read was not retried (attempts %d)", n)
	}
}

func TestListAllFollowsPagesAndEmptyLastPage(t *testing.T) {
	const total = 200 // exactly two full pages: Joplin says has_more on page 2
	var pages atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pages.Add(1)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		var items []map[string]string
		for i := (page - 1) * limit; i < page*limit && i < total; i++ {
			items = append(items, map[string]string{"id": strconv.Itoa(i)})
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items, "has_more": len(items) == limit})
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, 0)
	got, err := ListAll[map[string]string](context.Background(), c, "/notes", url.Values{}, 1000)
	if err != nil || len(got) != total || pages.Load() != 3 {
		t.Fatalf("got %d items in %d pages, err %v", len(got), pages.Load(), err)
	}
	if _, err := ListAll[map[string]string](context.Background(), c, "/notes", nil, 150); code(err) != domainerr.JoplinError {
		t.Fatalf("bound not enforced: %v", err)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "http://user:pw@host", "http://h?token=x", "nohost"} {
		if _, err := New(Config{BaseURL: u}); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestCallerCancellationIsNotAnOutage: when the caller cancels while Joplin
// holds the request, the request is aborted, a read reports the caller's
// cancellation (never JOPLIN_UNAVAILABLE), and a write that was already
// sent reports WRITE_OUTCOME_UNKNOWN.
func TestCallerCancellationIsNotAnOutage(t *testing.T) {
	arrived, aborted := make(chan struct{}, 1), make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
		aborted <- struct{}{}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, 5*time.Second)
	for _, write := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			if write {
				errc <- c.Write(ctx, "PUT", "/notes/x", nil, map[string]string{"title": "t"}, nil)
			} else {
				errc <- c.Get(ctx, "/notes/x", nil, nil)
			}
		}()
		<-arrived
		cancel()
		<-aborted
		err := <-errc
		assertNoSecret(t, err)
		switch {
		case write && code(err) != domainerr.WriteOutcomeUnknown:
			t.Errorf("cancelled write: %v, want WRITE_OUTCOME_UNKNOWN", err)
		case !write && (code(err) != "" || !errors.Is(err, context.Canceled)):
			t.Errorf("cancelled read: %v, want the caller's context.Canceled", err)
		}
	}
}

// TestServerErrorToAWriteIsUncertain: Joplin can fail after it has written,
// so a 5xx answer to a write is WRITE_OUTCOME_UNKNOWN (non-retryable), while
// the same answer to a read stays JOPLIN_ERROR; NotApplied turns it into a
// refusal once the caller has checked.
func TestServerErrorToAWriteIsUncertain(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":"boom at /usr/lib/x.js"}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, 0)
	err := c.Write(context.Background(), "POST", "/notes", nil, map[string]string{"title": "x"}, nil)
	de, ok := domainerr.As(err)
	if !ok || de.Code != domainerr.WriteOutcomeUnknown || de.Retryable {
		t.Fatalf("write: %v", err)
	}
	ae, answered := AnsweredServerError(err)
	if !answered || code(ae.NotApplied()) != domainerr.JoplinError || ae.NotApplied().Status != 500 {
		t.Fatalf("answered %v, not applied %v", answered, ae)
	}
	if code(c.Get(context.Background(), "/notes", nil, nil)) != domainerr.JoplinError {
		t.Fatal("read: want JOPLIN_ERROR")
	}
}
