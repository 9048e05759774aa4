package joplinindex

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestOwnWritesDuringABuildAreSearchable: notebridge's own writes made
// while a build runs, after the build read the notes, the tags and their
// links, are in the index when the build ends, with no /events poll in
// between (the poll interval is an hour): own writes are searchable at once.
func TestOwnWritesDuringABuildAreSearchable(t *testing.T) {
	fake := joplinfake.New(token)
	var once sync.Once
	during := make(chan func(), 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The build's note listing: answered as read, then the writes.
		if r.Method == http.MethodGet && r.URL.Path == "/notes" && r.URL.Query().Get("include_deleted") == "1" {
			rec := httptest.NewRecorder()
			fake.ServeHTTP(rec, r)
			once.Do(func() { (<-during)() })
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tf := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tf, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	var clients [2]*joplin.Client
	for i := range clients {
		c, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tf, AvailabilityWait: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	c := clients[0]
	e := &env{fake: fake, c: c, ext: clients[1], applied: make(chan string, 1000), path: filepath.Join(t.TempDir(), "index.db")}
	x := New(c, Config{Path: e.path, Poll: time.Hour, Reconcile: time.Hour, Applied: func(what string) { e.applied <- what }})
	t.Cleanup(func() { x.Close() })

	// The world before, written behind the index's back (an own write
	// would start the index).
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	old := e.write(t, "POST", "/notes", map[string]any{"title": "before", "body": "apple", "parent_id": f["id"]})
	tag := e.write(t, "POST", "/tags", map[string]any{"title": "plans"})
	failed := make(chan error, 3)
	during <- func() {
		ctx := context.Background()
		failed <- c.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "during", "body": "kiwi", "parent_id": f["id"]}, nil)
		failed <- c.Write(ctx, "PUT", "/notes/"+old["id"].(string), nil, map[string]any{"body": "apple pear"}, nil)
		failed <- c.Write(ctx, "POST", "/tags/"+tag["id"].(string)+"/notes", nil, map[string]any{"id": old["id"]}, nil)
	}
	x.Start()
	e.wait(t, "built")
	for range 3 {
		if err := <-failed; err != nil {
			t.Fatal(err)
		}
	}
	for query, want := range map[string]string{"kiwi": "during", "pear": "before", "tag:plans": "before"} {
		if got := find(t, x, query); got != want {
			t.Errorf("search %q = %q, want %q", query, got, want)
		}
	}
}
