package joplinops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// pathLog records the path of every request that reaches the fake Joplin.
type pathLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *pathLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.paths = append(l.paths, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (l *pathLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.paths
	l.paths = nil
	return out
}

// TestGetNoteAsksJoplinOnlyForWhatIsRequested: get_note makes one Joplin
// request for the note itself, and asks for tags or resources only when
// the caller includes them.
func TestGetNoteAsksJoplinOnlyForWhatIsRequested(t *testing.T) {
	log := &pathLog{}
	srv := httptest.NewServer(log.wrap(joplinfake.New(token)))
	t.Cleanup(srv.Close)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token), 0o600)
	_, ex := newExecutor(t, srv.URL, tokenFile, 200*time.Millisecond)
	call := func(name, args string) json.RawMessage {
		t.Helper()
		out, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, json.RawMessage(args))
		if derr != nil {
			t.Fatalf("%s: %v", name, derr)
		}
		return out
	}
	var nb, note struct{ ID string }
	json.Unmarshal(call("create_notebook", `{"title":"requests"}`), &nb)
	json.Unmarshal(call("create_note", `{"notebook_id":"`+nb.ID+`","title":"one","body":"text"}`), &note)

	log.take()
	call("get_note", `{"id":"`+note.ID+`"}`)
	if got, want := log.take(), []string{"GET /notes/" + note.ID}; !slices.Equal(got, want) {
		t.Errorf("get_note without include: requests %v, want %v", got, want)
	}
	call("get_note", `{"id":"`+note.ID+`","include":["tags"]}`)
	if got, want := log.take(), []string{"GET /notes/" + note.ID, "GET /notes/" + note.ID + "/tags"}; !slices.Equal(got, want) {
		t.Errorf("get_note with tags: requests %v, want %v", got, want)
	}
}
