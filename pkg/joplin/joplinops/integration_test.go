//go:build integration

package joplinops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// bridge is an in-process bridge pointed at a real Joplin.
type bridge struct {
	client *joplin.Client
	exec   *executor.Executor
}

func newBridge(t *testing.T, j *joplintc.Joplin, wait time.Duration) bridge {
	t.Helper()
	jc, ex := newExecutor(t, j.URL(), j.TokenFile, wait)
	return bridge{client: jc, exec: ex}
}

// TestRealJoplinScenarios runs every Joplin scenario against a real Joplin
// container, through each MCP adapter.
func TestRealJoplinScenarios(t *testing.T) {
	root := mcptest.ModuleRoot(t)
	j := joplintc.Start(t, root)
	b := newBridge(t, j, 10*time.Second)
	bin := mcptest.BuildBinary(t, root)
	base := scenarios.Env{Joplin: b.client, Reindex: j.Restart}
	t.Run("in-process stdio", func(t *testing.T) {
		env := base
		c := mcptest.InProcessStdio(t, mcpadapter.NewServer(b.exec, registry.MCPStdio, "it"))
		env.Call = mcptest.Caller(t, c)
		scenarios.All(t, env)
		t.Run("mcp_resources", func(t *testing.T) { scenarios.MCPResources(t, c, env) })
	})
	t.Run("streamable http", func(t *testing.T) {
		env := base
		env.Call = mcptest.Caller(t, mcptest.HTTP(t, mcpadapter.NewServer(b.exec, registry.MCPHTTP, "it")))
		scenarios.All(t, env)
	})
	t.Run("binary stdio", func(t *testing.T) {
		env := base
		env.Call = mcptest.Caller(t, mcptest.Binary(t, bin, "--joplin-url", j.URL(), "--joplin-token-file", j.TokenFile, "--joplin-wait", "10s", "--state-dir", t.TempDir()))
		scenarios.All(t, env)
	})
}

// TestRealJoplinOutage: the bridge starts and answers while Joplin is down,
// reports retryable errors within the bounded wait, survives a mid-run stop,
// and recovers when Joplin returns on a new port, without a restart.
func TestRealJoplinOutage(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	j.Stop(t)
	const wait = 2 * time.Second
	b := newBridge(t, j, wait)
	call := mcptest.Caller(t, mcptest.HTTP(t, mcpadapter.NewServer(b.exec, registry.MCPHTTP, "it")))
	ctx := context.Background()

	expectUnavailable := func(phase string) time.Duration {
		start := time.Now()
		_, derr := call(ctx, "list_notebooks", map[string]any{})
		elapsed := time.Since(start)
		if derr == nil || derr.Code != domainerr.JoplinUnavailable || !derr.Retryable {
			t.Fatalf("%s: want retryable JOPLIN_UNAVAILABLE, got %v", phase, derr)
		}
		if elapsed > wait+3*time.Second {
			t.Fatalf("%s: the wait was not bounded: %v", phase, elapsed)
		}
		return elapsed
	}
	firstSuccess := func(phase string, since time.Time) time.Duration {
		for time.Since(since) < 2*time.Minute {
			if _, derr := call(ctx, "list_notebooks", map[string]any{}); derr == nil {
				return time.Since(since)
			}
		}
		t.Fatalf("%s: no recovery", phase)
		return 0
	}

	t.Logf("started while Joplin down: error after %v", expectUnavailable("bridge started while down"))
	restarted := time.Now()
	j.StartAgain(t)
	t.Logf("Joplin back: first success %v after start was requested", firstSuccess("first start", restarted))

	stopped := time.Now()
	j.Stop(t)
	expectUnavailable("stopped mid-run")
	t.Logf("Joplin stopped: first retryable error %v after stop was requested", time.Since(stopped))

	restarted = time.Now()
	j.StartAgain(t)
	t.Logf("Joplin back again: first success %v after start was requested", firstSuccess("second start", restarted))
}

// TestRealJoplinWriteSentOnce forwards a create to Joplin and drops the
// answer: the bridge must report WRITE_OUTCOME_UNKNOWN with the object id,
// must not resend, and Joplin must hold the note exactly once.
func TestRealJoplinWriteSentOnce(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	b := newBridge(t, j, 5*time.Second)
	call := mcptest.Caller(t, mcptest.InProcessStdio(t, mcpadapter.NewServer(b.exec, registry.MCPStdio, "it")))
	nb := scenarios.Folder(t, scenarios.Env{Joplin: b.client}, "Write once", "")

	j.Proxy.DropAfter(func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/notes" })
	_, derr := call(context.Background(), "create_note", map[string]any{"notebook_id": nb, "title": "Lost answer"})
	j.Proxy.DropAfter(nil)
	if derr == nil || derr.Code != domainerr.WriteOutcomeUnknown || derr.Retryable {
		t.Fatalf("want non-retryable WRITE_OUTCOME_UNKNOWN, got %v", derr)
	}
	if j.Proxy.Dropped() != 1 {
		t.Fatalf("create sent %d times, want 1", j.Proxy.Dropped())
	}
	id, _ := derr.Details["id"].(string)
	notes, err := joplin.ListAll[struct {
		ID       string `json:"id"`
		ParentID string `json:"parent_id"`
		Title    string `json:"title"`
	}](context.Background(), b.client, "/notes", url.Values{"fields": {"id,parent_id,title"}, "include_deleted": {"1"}}, 100000)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, n := range notes {
		if n.ParentID == nb && n.Title == "Lost answer" {
			count++
			if n.ID != id {
				t.Fatalf("stored id %s, error names %s", n.ID, id)
			}
		}
	}
	if count != 1 {
		t.Fatalf("Joplin holds the note %d times, want exactly once", count)
	}
	// A retry of the same create now finds the note instead of duplicating it.
	_, derr = call(context.Background(), "create_note", map[string]any{"notebook_id": nb, "title": "Lost answer"})
	if derr == nil || derr.Code != domainerr.NoteAlreadyExists {
		t.Fatalf("retry after unknown outcome: %v", derr)
	}
	b2, _ := json.Marshal(derr)
	t.Logf("retry answer: %s", b2)
}
