package toolsets

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
	"github.com/notebridge/notebridge/pkg/testkit/actionstest"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// entries collects what the executor hands its activity sink.
type entries struct {
	mu   sync.Mutex
	list []activity.Entry
}

func (e *entries) add(en activity.Entry) {
	e.mu.Lock()
	e.list = append(e.list, en)
	e.mu.Unlock()
}

func (e *entries) since(n int) []activity.Entry {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]activity.Entry(nil), e.list[n:]...)
}

func (e *entries) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.list)
}

// TestEveryCallIsLoggedOnceOnEverySurface calls every operation of the
// real catalog on every surface it is exposed on, through the real
// adapters (MCP stdio, MCP HTTP with the static token, GPT Actions with
// its token, call_tool of the core profile, an OAuth grant) and the
// resources reads: each call leaves exactly one activity entry, naming
// the operation, the surface and the credential.
func TestEveryCallIsLoggedOnceOnEverySurface(t *testing.T) {
	var calls atomic.Int32
	reg := countingCatalog(t, false, &calls)
	var log entries
	ex, err := executor.New(reg, executor.DefaultLimits, executor.WithActivity(log.add))
	if err != nil {
		t.Fatal(err)
	}
	core, err := ParseProfile(ProfileCore)
	if err != nil {
		t.Fatal(err)
	}
	stdio := mcptest.Caller(t, mcptest.InProcessStdio(t, mcpadapter.NewServer(ex, registry.MCPStdio, "test")))
	httpClient := mcptest.HTTP(t, mcpadapter.NewServer(ex, registry.MCPHTTP, "test"))
	mcpHTTP := mcptest.Caller(t, httpClient)
	actions := actionstest.Caller(t, ex)
	coreStdio := mcptest.Caller(t, mcptest.InProcessStdio(t, mcpadapter.NewServer(ex, registry.MCPStdio, "test", mcpadapter.Core(core, CoreHidden))))
	grant := principal.OAuth("grant-1", scope.NewSet(scope.All...), notebookscope.Everything())

	type surface struct {
		name, credential string
		exposed          registry.Transport
		call             func(op string)
	}
	surfaces := []surface{
		{"stdio", "stdio", registry.MCPStdio, func(op string) { stdio(context.Background(), op, map[string]any{}) }},
		{"mcp-http", "token:mcp", registry.MCPHTTP, func(op string) { mcpHTTP(context.Background(), op, map[string]any{}) }},
		{"actions", "token:actions", registry.Actions, func(op string) { actions(context.Background(), op, map[string]any{}) }},
		{"call_tool", "stdio", registry.MCPStdio, func(op string) {
			coreStdio(context.Background(), mcpadapter.CallToolName, map[string]any{"name": op, "arguments": map[string]any{}})
		}},
		{"mcp-http", "oauth:grant-1", registry.MCPHTTP, func(op string) {
			ex.Call(context.Background(), grant, registry.MCPHTTP, op, []byte(`{}`))
		}},
	}
	for _, s := range surfaces {
		for _, op := range reg.Exposed(s.exposed) {
			before := log.len()
			s.call(op.Name)
			got := log.since(before)
			if len(got) != 1 {
				t.Errorf("%s %s (%s): %d entries, want 1", s.name, op.Name, s.credential, len(got))
				continue
			}
			if e := got[0]; e.Tool != op.Name || e.Surface != s.name || e.Credential != s.credential || e.Outcome == "" {
				t.Errorf("%s %s: entry %+v, want tool %s, surface %s, credential %s", s.name, op.Name, e, op.Name, s.name, s.credential)
			}
		}
	}

	// The resources reads: a note's resource is get_note, the list
	// list_notes, both on the resources surface.
	for _, c := range []struct {
		tool string
		read func()
	}{
		{"get_note", func() {
			httpClient.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "joplin://note/0123456789abcdef0123456789abcdef"}})
		}},
		{"list_notes", func() { httpClient.ListResources(context.Background(), mcp.ListResourcesRequest{}) }},
	} {
		before := log.len()
		c.read()
		got := log.since(before)
		if len(got) != 1 || got[0].Tool != c.tool || got[0].Surface != activity.SurfaceResources || got[0].Credential != "token:mcp" {
			t.Errorf("resources read via %s: entries %+v, want one of %s on resources by token:mcp", c.tool, got, c.tool)
		}
	}
	if calls.Load() == 0 {
		t.Fatal("no handler ran: the calls never reached the operations")
	}
}
