package joplinops_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// uncertainSink collects what the executor hands to the operator journal.
type uncertainSink struct {
	mu  sync.Mutex
	got []executor.UncertainWrite
}

func (s *uncertainSink) add(u executor.UncertainWrite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, u)
}

func (s *uncertainSink) entries() []executor.UncertainWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]executor.UncertainWrite(nil), s.got...)
}

// createCase is one duplicate-checked create and where Joplin keeps it.
type createCase struct {
	op, kind string // kind: the Data API collection, e.g. "notes"
	args     func(notebook string) map[string]any
}

var createCases = []createCase{
	{"create_note", "notes", func(nb string) map[string]any {
		return map[string]any{"notebook_id": nb, "title": "Answered 500", "body": "body"}
	}},
	{"create_notebook", "folders", func(string) map[string]any { return map[string]any{"title": "Answered 500"} }},
	{"create_tag", "tags", func(string) map[string]any { return map[string]any{"title": "answered 500"} }},
	{"create_resource", "resources", func(string) map[string]any {
		return map[string]any{"data_base64": base64.StdEncoding.EncodeToString([]byte("resource bytes")), "title": "Answered 500"}
	}},
}

var byID = regexp.MustCompile(`^/(notes|folders|tags|resources)/[0-9a-f]{32}$`)

// TestCreateAnsweredWithServerErrorIsCheckedByID: Joplin answers a create
// with HTTP 500, having written it or not. The bridge reads the object under
// the id it chose: written as asked is a success, absent is JOPLIN_ERROR,
// and a check that fails is WRITE_OUTCOME_UNKNOWN naming the id, which
// reaches the operator journal. The create is sent once in every case.
func TestCreateAnsweredWithServerErrorIsCheckedByID(t *testing.T) {
	for _, c := range createCases {
		for _, mode := range []string{"written", "refused", "written_check_fails"} {
			t.Run(c.op+"/"+mode, func(t *testing.T) {
				var armed atomic.Bool
				create := func(r *http.Request) bool {
					return armed.Load() && r.Method == http.MethodPost && r.URL.Path == "/"+c.kind
				}
				check := func(r *http.Request) bool {
					return armed.Load() && mode == "written_check_fails" && r.Method == http.MethodGet &&
						byID.MatchString(r.URL.Path) && r.URL.Path[1:len(c.kind)+1] == c.kind
				}
				wrap := func(next http.Handler) http.Handler {
					if mode == "refused" {
						return joplinfake.FailBeforeServing(next, http.StatusInternalServerError, create)
					}
					return joplinfake.FailBeforeServing(joplinfake.FailAfterServing(next, http.StatusInternalServerError, create),
						http.StatusInternalServerError, check)
				}
				sink := &uncertainSink{}
				b := newResourceBridge(t, joplinops.DefaultLimits, executor.DefaultLimits, wrap,
					executor.WithOutputValidation(), executor.WithUncertainWriteSink(sink.add))
				nb := scenarios.Folder(t, scenarios.Env{Joplin: b.jc}, "Inbox", "")
				before, sent := countKind(t, b, c.kind), countRequests(b.fake, http.MethodPost, "/"+c.kind)
				armed.Store(true)
				res, derr := b.call(c.op, c.args(nb))
				armed.Store(false)
				if n := countRequests(b.fake, http.MethodPost, "/"+c.kind) - sent; mode != "refused" && n != 1 {
					t.Fatalf("create reached Joplin %d times, want 1", n)
				}
				created := countKind(t, b, c.kind) - before
				switch mode {
				case "written":
					var out struct {
						ID string `json:"id"`
					}
					if derr != nil || json.Unmarshal(res, &out) != nil || created != 1 || !exists(t, b, c.kind, out.ID) {
						t.Fatalf("want success naming the stored object, got %v %s (%d created)", derr, res, created)
					}
				case "refused":
					if derr == nil || derr.Code != domainerr.JoplinError || derr.Retryable || created != 0 {
						t.Fatalf("want JOPLIN_ERROR with nothing written, got %v (%d created)", derr, created)
					}
				case "written_check_fails":
					id, _ := derrDetail(derr, "id")
					if derr == nil || derr.Code != domainerr.WriteOutcomeUnknown || derr.Retryable || created != 1 || !exists(t, b, c.kind, id) {
						t.Fatalf("want WRITE_OUTCOME_UNKNOWN naming the stored object, got %v (%d created)", derr, created)
					}
					if e := sink.entries(); len(e) != 1 || e[0].Operation != c.op || e[0].Err.Details["id"] != id {
						t.Fatalf("journal entries: %+v", e)
					}
					return
				}
				if e := sink.entries(); len(e) != 0 {
					t.Fatalf("a settled outcome reached the journal: %+v", e)
				}
			})
		}
	}
}

// TestUpdateAnsweredWithServerErrorIsUncertain: an update has no fresh id
// whose presence would settle it, so a 500 answer is WRITE_OUTCOME_UNKNOWN
// naming the object, and journaled.
func TestUpdateAnsweredWithServerErrorIsUncertain(t *testing.T) {
	var armed atomic.Bool
	wrap := func(next http.Handler) http.Handler {
		return joplinfake.FailAfterServing(next, http.StatusInternalServerError, func(r *http.Request) bool {
			return armed.Load() && r.Method == http.MethodPut
		})
	}
	sink := &uncertainSink{}
	b := newResourceBridge(t, joplinops.DefaultLimits, executor.DefaultLimits, wrap, executor.WithUncertainWriteSink(sink.add))
	nb := scenarios.Folder(t, scenarios.Env{Joplin: b.jc}, "Inbox", "")
	armed.Store(true)
	_, derr := b.call("update_notebook", map[string]any{"id": nb, "title": "Renamed"})
	if derr == nil || derr.Code != domainerr.WriteOutcomeUnknown || derr.Retryable || derr.Details["id"] != nb {
		t.Fatalf("want WRITE_OUTCOME_UNKNOWN naming the notebook, got %v", derr)
	}
	if e := sink.entries(); len(e) != 1 || e[0].Operation != "update_notebook" || e[0].Err.Details["id"] != nb {
		t.Fatalf("journal entries: %+v", e)
	}
}

func derrDetail(derr *domainerr.Error, key string) (string, bool) {
	if derr == nil {
		return "", false
	}
	s, ok := derr.Details[key].(string)
	return s, ok
}

func countRequests(fake *joplinfake.Server, method, path string) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// countKind counts the objects of a kind in Joplin, trashed ones included.
func countKind(t *testing.T, b *resourceBridge, kind string) int {
	t.Helper()
	q := url.Values{"fields": {"id"}}
	if kind == "notes" || kind == "folders" {
		q.Set("include_deleted", "1")
	}
	all, err := joplin.ListAll[map[string]any](t.Context(), b.jc, "/"+kind, q, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

func exists(t *testing.T, b *resourceBridge, kind, id string) bool {
	t.Helper()
	return id != "" && b.jc.Get(t.Context(), "/"+kind+"/"+id, nil, nil) == nil
}
