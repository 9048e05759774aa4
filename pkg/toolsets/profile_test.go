package toolsets

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/actionstest"
	"github.com/notebridge/notebridge/pkg/transport/actions"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// countingCatalog is the real catalog with every handler replaced by one
// that counts its calls, in the read-only profile when readOnly is set.
func countingCatalog(t *testing.T, readOnly bool, calls *atomic.Int32) *registry.Registry {
	t.Helper()
	var ops []registry.Operation
	for _, op := range fullRegistry(t).Operations() {
		op.Handler = func(context.Context, json.RawMessage) (any, error) {
			calls.Add(1)
			return nil, domainerr.New(domainerr.NotFound, "counted")
		}
		ops = append(ops, op)
	}
	reg, err := registry.New(ops...)
	if err != nil {
		t.Fatal(err)
	}
	if readOnly {
		return reg.ReadOnly()
	}
	return reg
}

func TestBuildReadOnlyProfile(t *testing.T) {
	jc, err := joplin.New(joplin.Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Build(Config{Joplin: jc, JoplinLimits: joplinops.DefaultLimits, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reg.IsReadOnly() {
		t.Fatal("Config.ReadOnly did not select the read-only profile")
	}
	full := fullRegistry(t)
	if full.IsReadOnly() {
		t.Fatal("the default profile is read-only")
	}
	for _, tr := range registry.AllTransports {
		var want []string
		for _, op := range full.Exposed(tr) {
			if op.Effect == registry.EffectRead {
				want = append(want, op.Name)
			}
		}
		var got []string
		for _, op := range reg.Exposed(tr) {
			got = append(got, op.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || len(got) == 0 {
			t.Errorf("%s: read-only exposes %v, want the reads %v", tr, got, want)
		}
	}
}

// TestReadOnlyRefusesWritesEverywhere proves that a read-only server lists
// no write on any surface and that a write called anyway never reaches its
// handler: the executor answers READ_ONLY, MCP answers as for an unknown
// tool, Actions with 404.
func TestReadOnlyRefusesWritesEverywhere(t *testing.T) {
	var calls atomic.Int32
	reg := countingCatalog(t, true, &calls)
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var writes, reads []string
	for _, op := range reg.Operations() {
		if op.Effect == registry.EffectRead {
			reads = append(reads, op.Name)
		} else {
			writes = append(writes, op.Name)
		}
	}
	if len(writes) == 0 || len(reads) == 0 {
		t.Fatal("catalog lacks reads or writes")
	}

	// Executor: every write, on every transport it is exposed on.
	for _, name := range writes {
		op, _ := reg.Lookup(name)
		for _, tr := range op.Exposure {
			if _, derr := ex.Call(context.Background(), principal.StaticMCP(), tr, name, json.RawMessage(`{}`)); derr == nil || derr.Code != domainerr.ReadOnly {
				t.Errorf("executor %s over %s: %v, want READ_ONLY", name, tr, derr)
			}
		}
	}
	if got := actions.Status(domainerr.ReadOnly); got != 403 {
		t.Errorf("READ_ONLY maps to HTTP %d, want 403", got)
	}

	// MCP: tools/list names reads only; a hand-crafted tools/call is refused.
	for _, tr := range []registry.Transport{registry.MCPStdio, registry.MCPHTTP} {
		srv := mcpadapter.NewServer(ex, tr, "test")
		list, _ := json.Marshal(srv.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
		for _, name := range writes {
			if strings.Contains(string(list), `"name":"`+name+`"`) {
				t.Errorf("%s tools/list names write %s", tr, name)
			}
		}
		for _, name := range writes {
			msg := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
			owner := principal.With(context.Background(), principal.Stdio())
			resp, _ := json.Marshal(srv.HandleMessage(owner, json.RawMessage(msg)))
			if !strings.Contains(string(resp), `"error"`) && !strings.Contains(string(resp), `"isError":true`) {
				t.Errorf("%s tools/call %s accepted: %s", tr, name, resp)
			}
		}
	}

	// Actions: no write route and no write path in the OpenAPI document.
	doc, err := actions.Document(reg, "https://notes.example.com", "test")
	if err != nil {
		t.Fatal(err)
	}
	call := actionstest.Caller(t, ex)
	for _, name := range writes {
		if strings.Contains(string(doc), `"/v1/`+name+`"`) {
			t.Errorf("OpenAPI document lists write %s", name)
		}
		if _, derr := call(context.Background(), name, map[string]any{}); derr == nil || derr.Code != domainerr.NotFound {
			t.Errorf("Actions POST %s: %v, want 404 NOT_FOUND", name, derr)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d write handlers ran on a read-only server", n)
	}

	// Reads still run, on every surface.
	if _, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "list_tags", json.RawMessage(`{}`)); derr == nil || derr.Message != "counted" {
		t.Fatalf("read on a read-only server: %v", derr)
	}
	if _, derr := call(context.Background(), "list_tags", map[string]any{}); derr == nil || derr.Message != "counted" {
		t.Fatalf("Actions read on a read-only server: %v", derr)
	}
}
