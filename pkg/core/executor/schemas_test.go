package executor

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// badSchemaRegistry holds one operation whose input schema passes the
// registry's subset rules but that the validator cannot compile.
func badSchemaRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	bad := json.RawMessage(`{"type":"object","additionalProperties":false,"minProperties":"x"}`)
	good := json.RawMessage(`{"type":"object","additionalProperties":false}`)
	r, err := registry.New(registry.Operation{Name: "bad_schema", Title: "B", Description: "B", InputSchema: bad, OutputSchema: good,
		Effect: registry.EffectRead, Exposure: []registry.Transport{registry.MCPStdio},
		Handler: func(context.Context, json.RawMessage) (any, error) { return map[string]any{}, nil }})
	if err != nil {
		t.Fatalf("registry refused the schema: %v", err)
	}
	return r
}

// TestCheckSchemasReportsBadSchema: New compiles nothing, so a bad schema
// is caught by CheckSchemas (run over the catalog in its tests), and a call
// reaching it fails closed with INTERNAL rather than skipping validation.
func TestCheckSchemasReportsBadSchema(t *testing.T) {
	reg := badSchemaRegistry(t)
	ex, err := New(reg, DefaultLimits)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	err = CheckSchemas(reg)
	if err == nil || !strings.Contains(err.Error(), `"bad_schema" input schema`) {
		t.Fatalf("CheckSchemas = %v, want the bad input schema named", err)
	}
	_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "bad_schema", json.RawMessage(`{}`))
	if derr == nil || derr.Code != domainerr.Internal {
		t.Fatalf("call with an uncompilable schema = %v, want INTERNAL", derr)
	}
}

// TestCheckSchemasAcceptsGoodRegistry: a registry whose schemas compile
// passes.
func TestCheckSchemasAcceptsGoodRegistry(t *testing.T) {
	var calls atomic.Int32
	if err := CheckSchemas(testRegistry(t, &calls)); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentFirstCalls: many first calls at once on a fresh executor
// compile the schema once and all validate correctly (run with -race).
func TestConcurrentFirstCalls(t *testing.T) {
	var calls atomic.Int32
	ex, err := New(testRegistry(t, &calls), Limits{MaxArgBytes: 512, MaxDepth: 8, MaxActive: 64}, WithOutputValidation())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan string, 32)
	for i := 0; i < 16; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			if _, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "echo_id", json.RawMessage(`{"id":"`+goodID+`"}`)); derr != nil {
				errs <- "good call failed: " + derr.Message
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if _, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "echo_id", json.RawMessage(`{"id":"short"}`)); derr == nil || derr.Code != domainerr.InvalidArgument {
				errs <- "bad call was not refused"
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestArgumentFormErrors: arguments that are not JSON, or not an object,
// get their own stable messages (validation parses the arguments once and
// checks validity only on failure).
func TestArgumentFormErrors(t *testing.T) {
	var calls atomic.Int32
	ex, err := New(testRegistry(t, &calls), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"id":`:      "arguments are not valid JSON",
		`{"id":"x"}}`: "arguments are not valid JSON",
		`[1,2]`:       "arguments must be a JSON object",
		`"text"`:      "arguments must be a JSON object",
		` 7`:          "arguments must be a JSON object",
	} {
		_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "echo_id", json.RawMessage(args))
		if derr == nil || derr.Code != domainerr.InvalidArgument || derr.Message != want {
			t.Errorf("%s: got %v, want INVALID_ARGUMENT %q", args, derr, want)
		}
	}
	if calls.Load() != 0 {
		t.Errorf("handler ran %d times on malformed arguments", calls.Load())
	}
}

// TestRawResultMustBeValidJSON: a handler's raw bytes are checked once in
// the executor (adapters write the result without re-checking it), so
// broken bytes become INTERNAL, never a malformed response.
func TestRawResultMustBeValidJSON(t *testing.T) {
	for raw, wantErr := range map[string]bool{`{"id":`: true, `{"a":1}x`: true, `{"a":1}`: false} {
		r, err := registry.New(registry.Operation{Name: "raw_result", Title: "R", Description: "R",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Effect: registry.EffectRead, Exposure: []registry.Transport{registry.MCPStdio},
			Handler: func(context.Context, json.RawMessage) (any, error) { return json.RawMessage(raw), nil }})
		if err != nil {
			t.Fatal(err)
		}
		ex, _ := New(r, DefaultLimits)
		out, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "raw_result", nil)
		if wantErr && (derr == nil || derr.Code != domainerr.Internal) {
			t.Errorf("%s: got %s, %v; want INTERNAL", raw, out, derr)
		}
		if !wantErr && (derr != nil || string(out) != raw) {
			t.Errorf("%s: got %s, %v", raw, out, derr)
		}
	}
}
