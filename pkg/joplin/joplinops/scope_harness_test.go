package joplinops_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/identity"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/testkit/actionstest"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// scopedHarness runs the operations as the service does: the notebook
// view installed on the client, and a search index that only the write
// observer keeps fresh once built.
type scopedHarness struct {
	c    *joplin.Client
	ex   *executor.Executor
	x    *joplinindex.Indexer
	view *scopeview.View
	// built receives the index's signals ("built" once it is).
	built chan string
}

func newScopedHarness(t testing.TB) *scopedHarness {
	t.Helper()
	_, url, tf := joplinfake.Serve(t, token)
	return newScopedHarnessAt(t, url, tf)
}

// newScopedHarnessAt is newScopedHarness against the Joplin at url (a
// real one in the integration tests).
func newScopedHarnessAt(t testing.TB, url, tf string) *scopedHarness {
	return newScopedMeaningHarness(t, url, tf, joplinindex.MeaningConfig{})
}

// newScopedMeaningHarness is newScopedHarnessAt with search by meaning set
// up by m.
func newScopedMeaningHarness(t testing.TB, url, tf string, m joplinindex.MeaningConfig) *scopedHarness {
	return newScopedHarnessWith(t, url, tf, m, "")
}

// newScopedHarnessWith is newScopedMeaningHarness with, when stateDir is
// set, the Joplin identity guard keeping its record there (as the service
// does: a new harness on the same stateDir is a restart).
func newScopedHarnessWith(t testing.TB, url, tf string, m joplinindex.MeaningConfig, stateDir string) *scopedHarness {
	t.Helper()
	c, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf, AvailabilityWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if stateDir != "" {
		c.SetGuard(identity.New(c, stateDir, nil))
	}
	built := make(chan string, 1000)
	x := joplinindex.New(c, joplinindex.Config{Path: filepath.Join(t.TempDir(), "index.db"), Poll: time.Hour, Reconcile: time.Hour,
		Applied: func(what string) { built <- what }, Meaning: m})
	t.Cleanup(func() { x.Close() })
	view := scopeview.Install(c, joplinops.DefaultLimits.MaxScan, nil)
	if stateDir != "" {
		if err := view.KeepClaimsIn(stateDir); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := registry.New(joplinops.Operations(c, joplinops.DefaultLimits, joplinops.WithSearchIndex(x),
		joplinops.WithNotebookView(view), joplinops.WithReceiptDir(t.TempDir(), receipts.DefaultLimits))...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
	if err != nil {
		t.Fatal(err)
	}
	return &scopedHarness{c: c, ex: ex, x: x, view: view, built: built}
}

// own is the context of requests the tests make of Joplin directly, as
// notebridge's own work: the view refuses a context without a principal.
var own = principal.With(context.Background(), principal.System())

// buildIndex builds the search index from what Joplin holds now.
func (h *scopedHarness) buildIndex(t testing.TB) {
	t.Helper()
	h.x.Start()
	for s := range h.built {
		if s == "built" {
			return
		}
	}
}

// caller calls operations over one surface as a caller limited to some
// notebooks.
type caller struct {
	name string
	t    registry.Transport
	call func(op string, args map[string]any) (json.RawMessage, *domainerr.Error)
}

// callers are the surfaces, each with a caller limited to sc: the stdio
// owner started with --notebooks (an in-process MCP stdio pipe), the
// static MCP token with its notebook setting (Streamable HTTP), the
// Actions token with its setting (HTTP), and an OAuth grant's principal
// on MCP HTTP through the executor (the grant's wire path is the Chromium
// check's, deploy/ci/consent-chromium.sh).
func (h *scopedHarness) callers(t testing.TB, sc notebookscope.Scope) []caller {
	t.Helper()
	via := func(call mcptest.CallFunc) func(string, map[string]any) (json.RawMessage, *domainerr.Error) {
		return func(op string, args map[string]any) (json.RawMessage, *domainerr.Error) {
			return call(context.Background(), op, args)
		}
	}
	grant := principal.OAuth("grant", scope.NewSet(scope.NotesRead, scope.NotesWrite), sc)
	return []caller{
		{"mcp-stdio", registry.MCPStdio, via(mcptest.Caller(t, mcptest.InProcessStdioAs(t, mcpadapter.NewServer(h.ex, registry.MCPStdio, "test"),
			principal.Stdio().WithNotebooks(sc))))},
		{"mcp-http", registry.MCPHTTP, via(mcptest.Caller(t, mcptest.HTTPWith(t, mcpadapter.NewServer(h.ex, registry.MCPHTTP, "test"), &sc)))},
		{"actions", registry.Actions, via(actionstest.CallerWith(t, h.ex, &sc))},
		{"mcp-http-oauth", registry.MCPHTTP, func(op string, args map[string]any) (json.RawMessage, *domainerr.Error) {
			b, _ := json.Marshal(args)
			return h.ex.Call(context.Background(), grant, registry.MCPHTTP, op, b)
		}},
	}
}

// ownerCall calls op as the unlimited owner.
func (h *scopedHarness) ownerCall(op string, args map[string]any) (json.RawMessage, *domainerr.Error) {
	b, _ := json.Marshal(args)
	return h.ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, op, b)
}

// owner calls op as the unlimited owner and decodes the result into out.
func (h *scopedHarness) owner(t testing.TB, op string, args map[string]any, out any) {
	t.Helper()
	res, derr := h.ownerCall(op, args)
	if derr != nil {
		t.Fatalf("%s as the owner: %v %v", op, derr, derr.Details)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatal(err)
		}
	}
}

// ownerID calls op as the owner and returns the result's id.
func (h *scopedHarness) ownerID(t testing.TB, op string, args map[string]any) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	h.owner(t, op, args, &out)
	return out.ID
}
