package joplinops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

const token = "fake-joplin-token-0123456789"

type harness struct {
	fake *joplinfake.Server
	url  string
	exec *executor.Executor
	env  scenarios.Env
}

func newHarness(t testing.TB, opts ...executor.Option) *harness {
	t.Helper()
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token), 0o600)
	jc, ex := newExecutor(t, srv.URL, tokenFile, 200*time.Millisecond, opts...)
	call := func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error) {
		b, _ := json.Marshal(args)
		return ex.Call(ctx, principal.Stdio(), registry.MCPStdio, name, b)
	}
	return &harness{fake: fake, url: srv.URL, exec: ex, env: scenarios.Env{
		Joplin: jc, Call: call, Reindex: func(*testing.T) { fake.ReindexSearch() },
	}}
}

// TestScenariosAgainstFake runs every scenario with each result checked
// against its output schema, and proves that this covers every Joplin
// operation: production skips that check (it re-parsed every answer,
// issue 35), so an operation no scenario answers successfully would have
// outputs nothing proves.
func TestScenariosAgainstFake(t *testing.T) {
	var mu sync.Mutex
	answered := map[string]bool{}
	h := newHarness(t, executor.WithActivity(func(e activity.Entry) {
		if e.Outcome == activity.OutcomeOK {
			mu.Lock()
			answered[e.Tool] = true
			mu.Unlock()
		}
	}))
	scenarios.All(t, h.env)
	if t.Failed() {
		return
	}
	var unproven []string
	for _, op := range h.exec.Registry().Operations() {
		if !answered[op.Name] && !provenElsewhere[op.Name] {
			unproven = append(unproven, op.Name)
		}
	}
	if len(unproven) > 0 {
		t.Errorf("no scenario answers these operations successfully, so nothing checks their output schema: %v", unproven)
	}
}

// provenElsewhere are the operations whose successful answers other tests
// of this package check against their output schemas (each names the test).
var provenElsewhere = map[string]bool{
	"edit_note": true, // TestEditNoteIsTheLeanAgentTask, behind newIndexHarness's validating executor
}

func TestStatusWhenJoplinIsDown(t *testing.T) {
	h := newHarness(t)
	h.fake.SetDown(true)
	res, derr := h.env.Call(context.Background(), "joplin_status", map[string]any{})
	if derr != nil || string(res) == "" {
		t.Fatal(derr)
	}
	var st struct {
		Reachable bool   `json:"reachable"`
		Code      string `json:"code"`
		Message   string `json:"message"`
	}
	json.Unmarshal(res, &st)
	if st.Reachable || st.Code != string(domainerr.JoplinUnavailable) {
		t.Fatalf("status while down: %s", res)
	}
	// The message names the URL tried, so a wrong --joplin-url shows; never the token.
	if !strings.Contains(st.Message, h.url) || strings.Contains(string(res), token) {
		t.Fatalf("status must name the Joplin URL and not the token: %s", res)
	}
	_, derr = h.env.Call(context.Background(), "list_notebooks", map[string]any{})
	if derr == nil || derr.Code != domainerr.JoplinUnavailable || !derr.Retryable {
		t.Fatalf("read while down: %v", derr)
	}
	h.fake.SetDown(false)
	if _, derr := h.env.Call(context.Background(), "list_notebooks", map[string]any{}); derr != nil {
		t.Fatalf("no recovery: %v", derr)
	}
}

// newExecutor builds the Joplin operations against baseURL behind an
// executor that, in tests, also checks every result against its output
// schema; benchmarks measure the executor as it runs in production, which
// does not (the tests prove the outputs, issue 35).
func newExecutor(t testing.TB, baseURL, tokenFile string, wait time.Duration, opts ...executor.Option) (*joplin.Client, *executor.Executor) {
	t.Helper()
	jc, err := joplin.New(joplin.Config{BaseURL: baseURL, TokenFile: tokenFile, AvailabilityWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(joplinops.Operations(jc, joplinops.DefaultLimits,
		joplinops.WithReceiptDir(t.TempDir(), receipts.DefaultLimits))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, bench := t.(*testing.B); !bench {
		opts = append(opts, executor.WithOutputValidation())
	}
	ex, err := executor.New(reg, executor.DefaultLimits, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return jc, ex
}

// TestCreateNoteUncertainOutcomeNamesTheID forwards the create to Joplin,
// then drops the connection before the answer: the call must report a
// non-retryable WRITE_OUTCOME_UNKNOWN naming the id, and the note must exist
// exactly once.
func TestCreateNoteUncertainOutcomeNamesTheID(t *testing.T) {
	var dropped atomic.Int32
	proxy := httptest.NewServer(joplinfake.DropAnswers(joplinfake.New(token), func(r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Path == "/notes" {
			dropped.Add(1)
			return true
		}
		return false
	}))
	defer proxy.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token), 0o600)
	jc, ex := newExecutor(t, proxy.URL, tokenFile, time.Second)
	env := scenarios.Env{Joplin: jc}
	nb := scenarios.Folder(t, env, "Inbox", "")
	_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "create_note",
		json.RawMessage(`{"notebook_id":"`+nb+`","title":"Lost answer"}`))
	if derr == nil || derr.Code != domainerr.WriteOutcomeUnknown || derr.Retryable {
		t.Fatalf("want non-retryable WRITE_OUTCOME_UNKNOWN, got %v", derr)
	}
	id, _ := derr.Details["id"].(string)
	if len(id) != 32 || dropped.Load() != 1 {
		t.Fatalf("id %q, creates sent %d", id, dropped.Load())
	}
	var n struct {
		Title string `json:"title"`
	}
	if err := jc.Get(context.Background(), "/notes/"+id, nil, &n); err != nil || n.Title != "Lost answer" {
		t.Fatalf("the note the error names is not in Joplin: %v", err)
	}
}
