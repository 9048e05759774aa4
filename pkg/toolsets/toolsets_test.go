package toolsets

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/schema"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/toolsnaps"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

var update = flag.Bool("update", false, "rewrite the tool snapshots")

func fullRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	jc, err := joplin.New(joplin.Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Build(Config{Joplin: jc, JoplinLimits: joplinops.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestCatalogRules runs the registry's build-time rules over the real
// catalog, plus the rules adapters rely on.
func TestCatalogRules(t *testing.T) {
	reg := fullRegistry(t)
	if reg.Len() == 0 {
		t.Fatal("empty catalog")
	}
	// search and fetch keep the names ChatGPT's search/fetch convention
	// requires.
	verbObject := regexp.MustCompile(`^[a-z]+(_[a-z0-9]+)+$|^(search|fetch)$`)
	for _, op := range reg.Operations() {
		if !verbObject.MatchString(op.Name) || len(op.Name) > 64 {
			t.Errorf("%s: name is not verb_object snake_case", op.Name)
		}
		if p := schema.CheckSubset(op.InputSchema); p != nil {
			t.Errorf("%s: input schema outside the subset: %v", op.Name, p)
		}
		if p := schema.CheckResultSubset(op.OutputSchema); p != nil {
			t.Errorf("%s: output schema outside the subset: %v", op.Name, p)
		}
		if len(op.Description) > 300 {
			t.Errorf("%s: description longer than 300 characters", op.Name)
		}
		h := effectiveHints(mcpadapter.Annotations(op), false)
		if h.readOnly != (op.Effect == registry.EffectRead) {
			t.Errorf("%s: readOnly hint disagrees with effect %s", op.Name, op.Effect)
		}
		if op.Effect == registry.EffectRead && (h.destructive || !h.idempotent) {
			t.Errorf("%s: read operation marked destructive or not idempotent", op.Name)
		}
		if (op.Effect == registry.EffectTrash || op.Effect == registry.EffectDeletePermanent || op.Effect == registry.EffectUpdate) && !h.destructive {
			t.Errorf("%s: %s operation not marked destructive", op.Name, op.Effect)
		}
		if op.Effect == registry.EffectCreate && (h.destructive || h.idempotent) {
			t.Errorf("%s: create marked destructive or idempotent", op.Name)
		}
		if op.Effect != registry.EffectCreate && !h.idempotent {
			t.Errorf("%s: %s operation not marked idempotent", op.Name, op.Effect)
		}
		if h.openWorld {
			t.Errorf("%s: marked open-world", op.Name)
		}
		if op.Toolset == "" {
			t.Errorf("%s: no toolset", op.Name)
		}
	}
	// The executor compiles schemas lazily, on each operation's first
	// call; this compiles every one, so a schema the validator rejects
	// fails here rather than on a user's first call.
	if err := executor.CheckSchemas(reg); err != nil {
		t.Fatalf("executor cannot compile the catalog: %v", err)
	}
}

func TestRegistryRejectsBadOperations(t *testing.T) {
	good := fullRegistry(t).Operations()[0]
	mut := func(f func(*registry.Operation)) registry.Operation { o := good; f(&o); return o }
	cases := map[string][]registry.Operation{
		"duplicate":     {good, good},
		"camelCase":     {mut(func(o *registry.Operation) { o.Name = "getNote" })},
		"too long":      {mut(func(o *registry.Operation) { o.Name = "a" + string(bytes.Repeat([]byte("_b"), 40)) })},
		"no effect":     {mut(func(o *registry.Operation) { o.Effect = "" })},
		"no exposure":   {mut(func(o *registry.Operation) { o.Exposure = nil })},
		"open schema":   {mut(func(o *registry.Operation) { o.InputSchema = json.RawMessage(`{"type":"object"}`) })},
		"no handler":    {mut(func(o *registry.Operation) { o.Handler = nil })},
		"bad transport": {mut(func(o *registry.Operation) { o.Exposure = []registry.Transport{"smtp"} })},
	}
	for name, ops := range cases {
		if _, err := registry.New(ops...); err == nil {
			t.Errorf("%s: registry accepted it", name)
		}
	}
}

func TestParse(t *testing.T) {
	if got, err := Parse(""); err != nil || len(got) != len(Toolsets) {
		t.Fatalf("default: %v %v", got, err)
	}
	if _, err := Parse("joplin,nope"); err == nil {
		t.Fatal("unknown toolset accepted")
	}
}

// TestToolsListSnapshots snapshots the MCP tools/list answer, one file per
// tool and surface (testdata/toolsnaps/<surface>/<tool>.json, and _order
// for the order listed). Run `go test ./pkg/toolsets -run Snapshots -update`
// to accept a deliberate change.
func TestToolsListSnapshots(t *testing.T) {
	for _, tr := range []registry.Transport{registry.MCPStdio, registry.MCPHTTP} {
		checkToolSnaps(t, string(tr), toolsListFor(t, fullRegistry(t), tr))
	}
}

// checkToolSnaps holds a tools/list answer against the snapshots of
// surface, one per tool.
func checkToolSnaps(t *testing.T, surface string, answer []byte) {
	t.Helper()
	var v struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &v); err != nil || len(v.Result.Tools) == 0 {
		t.Fatalf("tools/list answer: %s", answer)
	}
	snaps := make([]toolsnaps.Snap, 0, len(v.Result.Tools)+1)
	names := make([]string, 0, len(v.Result.Tools))
	for _, raw := range v.Result.Tools {
		var tool struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil || tool.Name == "" {
			t.Fatalf("a tool without a name: %s", raw)
		}
		names = append(names, tool.Name)
		snaps = append(snaps, toolsnaps.Snap{Name: tool.Name, JSON: raw})
	}
	snaps = append(snaps, toolsnaps.Names("_order", names))
	toolsnaps.Check(t, filepath.Join("testdata", "toolsnaps", surface), snaps, *update,
		"go test ./pkg/toolsets -run Snapshots -update")
}

// compactToolsList returns the tools/list answer as sent on the wire.
func compactToolsList(t testing.TB, reg *registry.Registry) []byte {
	t.Helper()
	return toolsListFor(t, reg, registry.MCPStdio)
}

func toolsListFor(t testing.TB, reg *registry.Registry, tr registry.Transport, opts ...mcpadapter.ServerOption) []byte {
	t.Helper()
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpadapter.NewServer(ex, tr, "golden", opts...)
	resp := srv.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hints are the four MCP tool hints as a client reads them.
type hints struct{ readOnly, destructive, idempotent, openWorld bool }

// effectiveHints reads a as a client does. By the MCP specification an
// absent hint takes its default (readOnly false, destructive true,
// idempotent false, openWorld true), and destructive and idempotent are
// meaningful only when readOnly is false: a read-only tool, which changes
// nothing, counts as non-destructive and idempotent. A naive client takes
// an absent hint for false (absentFalse).
func effectiveHints(a mcp.ToolAnnotation, absentFalse bool) hints {
	or := func(p *bool, def bool) bool {
		if p == nil {
			return def && !absentFalse
		}
		return *p
	}
	h := hints{
		readOnly:    or(a.ReadOnlyHint, false),
		destructive: or(a.DestructiveHint, true),
		idempotent:  or(a.IdempotentHint, false),
		openWorld:   or(a.OpenWorldHint, true),
	}
	if h.readOnly {
		if a.DestructiveHint != nil || a.IdempotentHint != nil {
			h.destructive = true // a read-only tool must not state them
		} else {
			h.destructive, h.idempotent = false, true
		}
	}
	return h
}

// TestAnnotationsUnambiguous: tools/list carries a hint only where leaving
// it out could be misread, and no tool title (issue #14): every tool
// reads the same under the MCP defaults and to a client that takes an
// absent hint for false, and no stated hint is left out there where both
// readings agree on it.
func TestAnnotationsUnambiguous(t *testing.T) {
	for _, op := range fullRegistry(t).Operations() {
		a := mcpadapter.Annotations(op)
		if spec, naive := effectiveHints(a, false), effectiveHints(a, true); spec != naive {
			t.Errorf("%s: hints read %+v under the MCP defaults but %+v when absent means false", op.Name, spec, naive)
		}
		if a.ReadOnlyHint != nil && !*a.ReadOnlyHint || a.IdempotentHint != nil && !*a.IdempotentHint {
			t.Errorf("%s: states a false readOnly or idempotent hint, which every client reads from its absence", op.Name)
		}
		raw, err := json.Marshal(mcpadapter.Tool(op))
		if err != nil {
			t.Fatal(err)
		}
		var tool struct {
			Title *string `json:"title"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		if tool.Title != nil {
			t.Errorf("%s: tool carries a title %q", op.Name, *tool.Title)
		}
	}
}
