package executor

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

type echoIn struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func testRegistry(t testing.TB, calls *atomic.Int32) *registry.Registry {
	t.Helper()
	in := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id"],"properties":{
		"id":{"type":"string","pattern":"^[0-9a-f]{32}$"},
		"title":{"type":"string","minLength":1,"maxLength":10},
		"n":{"type":"integer","minimum":0,"maximum":5},
		"deep":{"type":"array","maxItems":4,"items":{"type":"array","maxItems":4,"items":{"type":"integer","minimum":0,"maximum":1}}}}}`)
	out := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string","minLength":32,"maxLength":32}}}`)
	ops := []registry.Operation{
		{Name: "echo_id", Title: "Echo", Description: "Echo id", InputSchema: in, OutputSchema: out,
			Effect: registry.EffectRead, Exposure: []registry.Transport{registry.MCPStdio},
			Handler: func(ctx context.Context, args json.RawMessage) (any, error) {
				calls.Add(1)
				var v echoIn
				_ = json.Unmarshal(args, &v)
				switch v.Title {
				case "panic":
					panic("boom secret-ish detail")
				case "fail":
					return nil, domainerr.New(domainerr.NotFound, "no such thing")
				case "plain":
					return nil, context.Canceled
				case "badout":
					return map[string]any{"id": "nope"}, nil
				}
				return map[string]any{"id": v.ID}, nil
			}},
	}
	r, err := registry.New(ops...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const goodID = "0123456789abcdef0123456789abcdef"

func TestExecutorPipeline(t *testing.T) {
	var calls atomic.Int32
	ex, err := New(testRegistry(t, &calls), Limits{MaxArgBytes: 512, MaxDepth: 4, MaxActive: 2}, WithOutputValidation())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		name, op string
		tr       registry.Transport
		args     string
		code     domainerr.Code
	}{
		{"ok", "echo_id", registry.MCPStdio, `{"id":"` + goodID + `"}`, ""},
		{"unknown op", "nope", registry.MCPStdio, `{}`, domainerr.UnknownOperation},
		{"not exposed", "echo_id", registry.Actions, `{"id":"` + goodID + `"}`, domainerr.NotExposed},
		{"too large", "echo_id", registry.MCPStdio, `{"id":"` + strings.Repeat("a", 600) + `"}`, domainerr.RequestTooLarge},
		{"too deep", "echo_id", registry.MCPStdio, `{"deep":[[[[[1]]]]]}`, domainerr.NestingTooDeep},
		{"unknown key", "echo_id", registry.MCPStdio, `{"id":"` + goodID + `","extra":1}`, domainerr.InvalidArgument},
		{"missing required", "echo_id", registry.MCPStdio, `{}`, domainerr.InvalidArgument},
		{"bad pattern", "echo_id", registry.MCPStdio, `{"id":"SECRETSECRETSECRETSECRETSECRET12"}`, domainerr.InvalidArgument},
		{"not object", "echo_id", registry.MCPStdio, `[1]`, domainerr.InvalidArgument},
		{"invalid json", "echo_id", registry.MCPStdio, `{"id":`, domainerr.InvalidArgument},
		{"panic", "echo_id", registry.MCPStdio, `{"id":"` + goodID + `","title":"panic"}`, domainerr.Internal},
		{"domain error", "echo_id", registry.MCPStdio, `{"id":"` + goodID + `","title":"fail"}`, domainerr.NotFound},
		{"cancelled", "echo_id", registry.MCPStdio, `{"id":"` + goodID + `","title":"plain"}`, domainerr.Cancelled},
		{"bad output", "echo_id", registry.MCPStdio, `{"id":"` + goodID + `","title":"badout"}`, domainerr.Internal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := calls.Load()
			out, derr := ex.Call(ctx, principal.Stdio(), c.tr, c.op, json.RawMessage(c.args))
			if c.code == "" {
				if derr != nil || string(out) != `{"id":"`+goodID+`"}` {
					t.Fatalf("got %s, %v", out, derr)
				}
				return
			}
			if derr == nil || derr.Code != c.code {
				t.Fatalf("want %s, got %v (%s)", c.code, derr, out)
			}
			enc, _ := json.Marshal(derr)
			if strings.Contains(string(enc), "SECRET") || strings.Contains(string(enc), "boom") || strings.Contains(string(enc), "goroutine") {
				t.Fatalf("error leaks input or stack: %s", enc)
			}
			rejectedEarly := c.code == domainerr.UnknownOperation || c.code == domainerr.NotExposed ||
				c.code == domainerr.RequestTooLarge || c.code == domainerr.NestingTooDeep || c.code == domainerr.InvalidArgument
			if rejectedEarly && calls.Load() != before {
				t.Fatalf("handler ran for a call rejected before it")
			}
		})
	}
}

func TestValidationProblemsNamePaths(t *testing.T) {
	var calls atomic.Int32
	ex, err := New(testRegistry(t, &calls), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "echo_id",
		json.RawMessage(`{"title":"waytoolongSECRETvalue","n":9,"bogus":true}`))
	if derr == nil {
		t.Fatal("expected an error")
	}
	got, _ := json.Marshal(derr.Details["problems"])
	for _, want := range []string{`"/title"`, `"/n"`, `"/id"`, "required property is missing", "string is too long", "number is too large", "unknown property"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("problems %s lack %s", got, want)
		}
	}
	if strings.Contains(string(got), "SECRET") || strings.Contains(string(got), "9") {
		t.Errorf("problems leak values: %s", got)
	}
}

func TestBusyBeyondMaxActive(t *testing.T) {
	block := make(chan struct{})
	started := make(chan struct{}, 1)
	in := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	r, err := registry.New(registry.Operation{Name: "wait_here", Title: "W", Description: "W", InputSchema: in, OutputSchema: in,
		Effect: registry.EffectRead, Exposure: []registry.Transport{registry.MCPStdio},
		Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
			started <- struct{}{}
			<-block
			return struct{}{}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := New(r, Limits{MaxArgBytes: 100, MaxDepth: 4, MaxActive: 1})
	done := make(chan struct{})
	go func() {
		ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "wait_here", nil)
		close(done)
	}()
	<-started
	_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "wait_here", nil)
	if derr == nil || derr.Code != domainerr.Busy || !derr.Retryable {
		t.Fatalf("want retryable BUSY, got %v", derr)
	}
	close(block)
	<-done
}

// TestScopeIsCheckedBeforeTheHandler: an OAuth grant without the scope an
// operation needs gets INSUFFICIENT_SCOPE naming it, and the handler never
// runs; the static-token holder keeps full access.
func TestScopeIsCheckedBeforeTheHandler(t *testing.T) {
	var calls atomic.Int32
	mk := func(name, toolset string, effect registry.Effect) registry.Operation {
		return registry.Operation{Name: name, Title: "T", Description: "D", Toolset: toolset,
			InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			Effect:       effect, Exposure: []registry.Transport{registry.MCPHTTP, registry.Actions},
			Handler: func(context.Context, json.RawMessage) (any, error) {
				calls.Add(1)
				return map[string]any{}, nil
			}}
	}
	reg, err := registry.New(mk("read_note", "joplin", registry.EffectRead), mk("create_note", "joplin", registry.EffectCreate),
		mk("okf_write", "okf", registry.EffectUpdate), mk("stray", "stray", registry.EffectRead))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := New(reg, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := principal.OAuth("grant", scope.NewSet(scope.NotesRead, scope.OKFRead), notebookscope.Everything())
	ctx := context.Background()
	for _, tr := range []registry.Transport{registry.MCPHTTP, registry.Actions} {
		for _, c := range []struct {
			op   string
			want scope.Scope
		}{{"create_note", scope.NotesWrite}, {"okf_write", scope.OKFWrite}, {"stray", ""}} {
			_, derr := ex.Call(ctx, readOnly, tr, c.op, json.RawMessage(`{}`))
			if derr == nil || derr.Code != domainerr.InsufficientScope || derr.Details["scope"] != string(c.want) || derr.Retryable {
				t.Errorf("%s %s: %+v", tr, c.op, derr)
			}
			// What adapters read before the call is the same decision.
			if aerr := ex.Authorize(readOnly, c.op); derr != nil && (aerr == nil || aerr.Code != derr.Code || aerr.Details["scope"] != derr.Details["scope"]) {
				t.Errorf("Authorize %s: %+v, Call: %+v", c.op, aerr, derr)
			}
		}
		// Bad arguments are not even looked at: the scope comes first.
		if _, derr := ex.Call(ctx, readOnly, tr, "create_note", json.RawMessage(`{"x":1}`)); derr == nil || derr.Code != domainerr.InsufficientScope {
			t.Errorf("%s: invalid arguments of a forbidden call: %+v", tr, derr)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d handlers ran without their scope", n)
	}
	if _, derr := ex.Call(ctx, readOnly, registry.MCPHTTP, "read_note", nil); derr != nil {
		t.Fatalf("read with notes:read: %v", derr)
	}
	if aerr := ex.Authorize(readOnly, "read_note"); aerr != nil {
		t.Fatalf("Authorize read with notes:read: %v", aerr)
	}
	for _, op := range []string{"create_note", "okf_write", "stray"} {
		if _, derr := ex.Call(ctx, principal.StaticMCP(), registry.MCPHTTP, op, nil); derr != nil {
			t.Fatalf("%s with the static token (full access): %v", op, derr)
		}
	}
	if n := calls.Load(); n != 4 {
		t.Fatalf("%d handler runs, want 4", n)
	}
}

// TestCallWithoutPrincipalIsRefused: the zero Principal is nobody, and
// notebridge's own System principal is no agent. Their calls are refused
// with UNAUTHENTICATED before anything else is looked at, valid arguments
// or not, and the handler never runs.
func TestCallWithoutPrincipalIsRefused(t *testing.T) {
	var calls atomic.Int32
	ex, err := New(testRegistry(t, &calls), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ op, args string }{
		{"echo_id", `{"id":"` + goodID + `"}`},
		{"echo_id", `{"x":`},
		{"nope", `{}`},
	} {
		for _, p := range []principal.Principal{{}, principal.System()} {
			for _, tr := range registry.AllTransports {
				if _, derr := ex.Call(context.Background(), p, tr, c.op, json.RawMessage(c.args)); derr == nil || derr.Code != domainerr.Unauthenticated {
					t.Errorf("%s over %s as kind %d: %v", c.op, tr, p.Kind(), derr)
				}
			}
			if derr := ex.Authorize(p, c.op); derr == nil || derr.Code != domainerr.Unauthenticated {
				t.Errorf("Authorize %s as kind %d: %v", c.op, p.Kind(), derr)
			}
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d handlers ran without a principal", n)
	}
}
