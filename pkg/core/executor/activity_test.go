package executor

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// TestActivityEntryPerCall: every call, refused or run, failed or not,
// hands the sink exactly one entry with the caller's credential, the
// outcome and the surface; the collector in the handler's context is the
// one whose ids the entry carries.
func TestActivityEntryPerCall(t *testing.T) {
	var calls atomic.Int32
	var got []activity.Entry
	ex, err := New(testRegistry(t, &calls), DefaultLimits, WithActivity(func(e activity.Entry) { got = append(got, e) }))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ctx     context.Context
		p       principal.Principal
		op      string
		args    string
		surface string
		cred    string
		outcome string
	}{
		{context.Background(), principal.Stdio(), "echo_id", `{"id":"` + goodID + `"}`, "stdio", "stdio", "ok"},
		{context.Background(), principal.Stdio(), "echo_id", `{"id":"` + goodID + `","title":"fail"}`, "stdio", "stdio", "NOT_FOUND"},
		{context.Background(), principal.StaticMCP(), "nope", `{}`, "stdio", "token:mcp", "UNKNOWN_OPERATION"},
		{context.Background(), principal.Principal{}, "echo_id", `{}`, "stdio", "none", "UNAUTHENTICATED"},
		{activity.WithSurface(context.Background(), activity.SurfaceCallTool), principal.StaticActions(), "echo_id", `{"x":1}`, "call_tool", "token:actions", "INVALID_ARGUMENT"},
	}
	for i, c := range cases {
		ex.Call(c.ctx, c.p, registry.MCPStdio, c.op, []byte(c.args))
		if len(got) != i+1 {
			t.Fatalf("case %d: %d entries after %d calls", i, len(got), i+1)
		}
		e := got[i]
		tool := c.op
		if c.outcome == "UNKNOWN_OPERATION" {
			tool = UnknownTool
		}
		if e.Surface != c.surface || e.Credential != c.cred || e.Outcome != c.outcome || e.Tool != tool || e.Time.IsZero() {
			t.Errorf("case %d: entry %+v, want surface %s, credential %s, outcome %s", i, e, c.surface, c.cred, c.outcome)
		}
	}
	if got[0].Bytes == 0 || got[1].Bytes != 0 {
		t.Errorf("bytes %d and %d, want the result's size and 0 for a failure", got[0].Bytes, got[1].Bytes)
	}
}

// TestQueryIsSummarised: a call's query is logged as its length and mode,
// never its text.
func TestQueryIsSummarised(t *testing.T) {
	var en activity.Entry
	summarise(&en, false, []byte(`{"query":"zebra ünïcode","mode":"semantic"}`), []byte(`{"mode":"keyword","notes":[]}`))
	if en.Query == nil || en.Query.Length != 13 || en.Query.Mode != "keyword" {
		t.Fatalf("query summary %+v, want length 13 and the mode the search ran in", en.Query)
	}
	summarise(&en, true, []byte(`{}`), []byte(`{"receipt_id":"r1"}`))
	if en.Receipt == nil || *en.Receipt != "r1" {
		t.Fatalf("receipt %v, want r1", en.Receipt)
	}
}

// TestEveryCallIsTracked reads this package: the handler runner (run) is
// reached only from call, call only from tracked, and tracked is what
// Call and CallScanned run. With TestOnlyTheExecutorRunsHandlers, no
// operation runs without its activity entry.
func TestEveryCallIsTracked(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	callers := map[string][]string{} // method → the functions calling it
	for _, path := range pkgs {
		if filepath.Ext(path) != ".go" || len(path) > 8 && path[len(path)-8:] == "_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
						callers[sel.Sel.Name] = append(callers[sel.Sel.Name], fn.Name.Name)
					}
				}
				return true
			})
		}
	}
	want := map[string][]string{"run": {"call"}, "call": {"tracked", "tracked"}, "tracked": {"Call", "CallScanned"}}
	for method, from := range want {
		got := callers[method]
		slices.Sort(got)
		if !slices.Equal(got, from) {
			t.Errorf("%s is called from %v, want only from %v", method, got, from)
		}
	}
}
