package joplinops_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// resourceBridge is an in-process bridge with the given limits in front of
// a fake Joplin, optionally behind a handler wrapper that injects failures.
type resourceBridge struct {
	fake      *joplinfake.Server
	url       string
	tokenFile string
	jc        *joplin.Client
	exec      *executor.Executor
}

func newResourceBridge(t testing.TB, limits joplinops.Limits, exLimits executor.Limits, wrap func(http.Handler) http.Handler, opts ...executor.Option) *resourceBridge {
	t.Helper()
	fake := joplinfake.New(token)
	var h http.Handler = fake
	if wrap != nil {
		h = wrap(fake)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	jc, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tokenFile, AvailabilityWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(joplinops.Operations(jc, limits)...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, exLimits, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &resourceBridge{fake: fake, url: srv.URL, tokenFile: tokenFile, jc: jc, exec: ex}
}

func (b *resourceBridge) call(name string, args any) (json.RawMessage, *domainerr.Error) {
	raw, _ := json.Marshal(args)
	return b.exec.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, raw)
}

func randomData(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// fileGets counts the content downloads the fake has answered.
func (b *resourceBridge) fileGets() int {
	n := 0
	for _, r := range b.fake.Requests() {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/file") {
			n++
		}
	}
	return n
}

func TestResourceSizeBound(t *testing.T) {
	b := newResourceBridge(t, joplinops.Limits{MaxScan: 1000, MaxResourceBytes: 1024}, executor.DefaultLimits, nil, executor.WithOutputValidation())
	enc := base64.StdEncoding.EncodeToString
	if _, derr := b.call("create_resource", map[string]any{"data_base64": enc(randomData(t, 1024)), "title": "at the bound"}); derr != nil {
		t.Fatalf("1024 bytes: %v", derr)
	}
	// Line breaks, which the decoder skips, do not count towards the bound.
	wrapped := enc(randomData(t, 1024))
	var lines []string
	for len(wrapped) > 76 {
		lines, wrapped = append(lines, wrapped[:76]), wrapped[76:]
	}
	if _, derr := b.call("create_resource", map[string]any{"data_base64": strings.Join(append(lines, wrapped), "\r\n"), "title": "wrapped"}); derr != nil {
		t.Fatalf("wrapped base64: %v", derr)
	}
	writes := b.fake.CountWrites()
	_, derr := b.call("create_resource", map[string]any{"data_base64": enc(randomData(t, 1025)), "title": "over"})
	if derr == nil || derr.Code != domainerr.ResourceTooLarge || derr.Retryable || derr.Details["size"] != int64(1025) {
		t.Fatalf("1025 bytes: %v", derr)
	}
	var r struct {
		ID string `json:"id"`
	}
	if err := b.jc.WriteMultipartFile(context.Background(), "POST", "/resources", map[string]any{"title": "big"}, "big.bin", randomData(t, 2000), &r); err != nil {
		t.Fatal(err)
	}
	if _, derr := b.call("update_resource", map[string]any{"id": r.ID, "data_base64": enc(randomData(t, 1025))}); derr == nil || derr.Code != domainerr.ResourceTooLarge {
		t.Fatalf("update over the bound: %v", derr)
	}
	if b.fake.CountWrites() != writes+1 {
		t.Fatal("an oversized upload reached Joplin")
	}
	if _, derr := b.call("get_resource_content", map[string]any{"id": r.ID}); derr == nil || derr.Code != domainerr.ResourceTooLarge {
		t.Fatalf("download over the bound: %v", derr)
	}
	if b.fileGets() != 0 {
		t.Fatal("an oversized resource was downloaded before being refused")
	}
}

func TestDuplicatePreflightHashesOnlyCandidates(t *testing.T) {
	b := newResourceBridge(t, joplinops.DefaultLimits, executor.DefaultLimits, nil, executor.WithOutputValidation())
	enc := base64.StdEncoding.EncodeToString
	for i, n := range []int{100, 200, 300} {
		if _, derr := b.call("create_resource", map[string]any{"data_base64": enc(randomData(t, n)), "title": "Same title"}); derr != nil {
			t.Fatalf("seed %d: %v", i, derr)
		}
	}
	if b.fileGets() != 0 {
		t.Fatalf("creates with no title and size match downloaded %d files", b.fileGets())
	}
	if _, derr := b.call("create_resource", map[string]any{"data_base64": enc(randomData(t, 200)), "title": "same TITLE"}); derr != nil {
		t.Fatal(derr)
	}
	if b.fileGets() != 1 {
		t.Fatalf("want exactly the one title and size match downloaded, got %d downloads", b.fileGets())
	}
}

// failing wraps the fake so requests for which fail returns true get a
// Joplin-style 500 and never reach it.
func failing(fail func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fail(r) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				w.Write([]byte(`{"error":"Internal Server Error: boom\n    at /usr/lib/x.js:1:1"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestCreateResourcePartialFailureIsReported: when a step after the create
// fails, the error is non-retryable and says the resource exists and is
// not attached; nothing else was changed.
func TestCreateResourcePartialFailureIsReported(t *testing.T) {
	for _, c := range []struct {
		step string
		fail func(*http.Request) bool
	}{
		{"attach", func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/notes/")
		}},
		{"set_metadata", func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/resources/")
		}},
	} {
		t.Run(c.step, func(t *testing.T) {
			b := newResourceBridge(t, joplinops.DefaultLimits, executor.DefaultLimits, failing(c.fail), executor.WithOutputValidation())
			env := scenarios.Env{Joplin: b.jc}
			nb := scenarios.Folder(t, env, "Inbox", "")
			var n struct {
				ID string `json:"id"`
			}
			if err := b.jc.Write(context.Background(), "POST", "/notes", nil, map[string]any{"parent_id": nb, "title": "N", "body": "keep"}, &n); err != nil {
				t.Fatal(err)
			}
			_, derr := b.call("create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString(randomData(t, 500)),
				"title": "Secret title", "filename": "x.bin", "note_id": n.ID})
			if derr == nil || derr.Retryable || derr.Details["created"] != true || derr.Details["attached"] != false ||
				derr.Details["failed_step"] != c.step || derr.Details["note_id"] != n.ID {
				t.Fatalf("want a partial-create error, got %v %v", derr, derr.Details)
			}
			if strings.Contains(derr.Message, "Secret") || strings.Contains(derr.Message, "/usr/lib") {
				t.Fatalf("message leaks: %s", derr.Message)
			}
			id, _ := derr.Details["resource_id"].(string)
			if err := b.jc.Get(context.Background(), "/resources/"+id, nil, nil); err != nil {
				t.Fatalf("the reported resource does not exist: %v", err)
			}
			var body struct {
				Body string `json:"body"`
			}
			if err := b.jc.Get(context.Background(), "/notes/"+n.ID, url.Values{"fields": {"body"}}, &body); err != nil || body.Body != "keep" {
				t.Fatalf("note body changed: %q %v", body.Body, err)
			}
		})
	}
}

// TestCreateResourceLostAnswerNamesTheID drops the answer to the upload:
// the error is WRITE_OUTCOME_UNKNOWN naming the id, and the resource is
// there under that id.
func TestCreateResourceLostAnswerNamesTheID(t *testing.T) {
	drop := func(next http.Handler) http.Handler {
		return joplinfake.DropAnswers(next, func(r *http.Request) bool {
			return r.Method == http.MethodPost && r.URL.Path == "/resources"
		})
	}
	b := newResourceBridge(t, joplinops.DefaultLimits, executor.DefaultLimits, drop, executor.WithOutputValidation())
	data := randomData(t, 4000)
	_, derr := b.call("create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString(data), "title": "Lost"})
	if derr == nil || derr.Code != domainerr.WriteOutcomeUnknown || derr.Retryable {
		t.Fatalf("want WRITE_OUTCOME_UNKNOWN, got %v", derr)
	}
	id, _ := derr.Details["id"].(string)
	got, err := b.jc.GetRaw(context.Background(), "/resources/"+id+"/file")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("resource %q not stored: %v", id, err)
	}
}
