package mcpadapter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// rpc sends one JSON-RPC request to s as the stdio caller and returns the
// result member.
func rpc(t *testing.T, s *Server, method, params string) map[string]any {
	t.Helper()
	ctx := principal.With(context.Background(), principal.Stdio())
	resp := s.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	b, _ := json.Marshal(resp)
	var v struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Result == nil {
		t.Fatalf("%s: %s", method, b)
	}
	return v.Result
}

// toolText returns the text block of a tools/call result and its isError.
func toolText(t *testing.T, res map[string]any) (string, bool) {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("content: %v", res)
	}
	isErr, _ := res["isError"].(bool)
	return content[0].(map[string]any)["text"].(string), isErr
}

// TestCoreReachesEveryTool: a core server lists the core tools and the
// two on-demand tools; find_tools names the others and describes a match
// with its input schema; call_tool runs one through the executor, which
// validates its arguments and refuses a tool the transport does not expose.
func TestCoreReachesEveryTool(t *testing.T) {
	s := NewServer(diffExecutor(t), registry.MCPStdio, "test", Core([]string{"echo"}, nil))
	var names []string
	for _, tool := range rpc(t, s, "tools/list", `{}`)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "call_tool,echo,find_tools" {
		t.Fatalf("listed: %v", names)
	}
	text, _ := toolText(t, rpc(t, s, "tools/call", `{"name":"find_tools","arguments":{}}`))
	if !strings.Contains(text, `"name":"fail"`) || strings.Contains(text, `"name":"echo"`) || strings.Contains(text, "http_only") || strings.Contains(text, "input_schema") {
		t.Fatalf("find_tools, no query: %s", text)
	}
	text, _ = toolText(t, rpc(t, s, "tools/call", `{"name":"find_tools","arguments":{"query":"fail"}}`))
	if !strings.Contains(text, `"input_schema":{`) || strings.Contains(text, `"name":"raw"`) {
		t.Fatalf("find_tools fail: %s", text)
	}
	text, _ = toolText(t, rpc(t, s, "tools/call", `{"name":"find_tools","arguments":{"query":"echo"}}`))
	if !strings.Contains(text, `"name":"echo"`) || !strings.Contains(text, `"maxLength":4194304`) {
		t.Fatalf("find_tools gives a listed tool's full schema: %s", text)
	}
	text, isErr := toolText(t, rpc(t, s, "tools/call", `{"name":"call_tool","arguments":{"name":"fail","arguments":{"text":"x"}}}`))
	if !isErr || !strings.Contains(text, `"NOT_FOUND"`) {
		t.Fatalf("call_tool fail: %s", text)
	}
	text, isErr = toolText(t, rpc(t, s, "tools/call", `{"name":"call_tool","arguments":{"name":"fail","arguments":{"nope":1}}}`))
	if !isErr || !strings.Contains(text, `"INVALID_ARGUMENT"`) {
		t.Fatalf("call_tool with bad arguments: %s", text)
	}
	text, isErr = toolText(t, rpc(t, s, "tools/call", `{"name":"call_tool","arguments":{"name":"http_only"}}`))
	if !isErr || !strings.Contains(text, `"NOT_EXPOSED"`) && !strings.Contains(text, `"UNKNOWN_OPERATION"`) {
		t.Fatalf("call_tool of a tool not on stdio: %s", text)
	}
	text, isErr = toolText(t, rpc(t, s, "tools/call", `{"name":"call_tool","arguments":{"name":"raw"}}`))
	if isErr || !strings.Contains(text, `"n"`) {
		t.Fatalf("call_tool raw: %s", text)
	}
}

// TestLeanInputDropsOnlyGuardBounds: bounds from leanBounds up go, smaller
// ones, enums, defaults and patterns stay; descriptions go (not a property
// named description); a hidden optional input goes.
func TestLeanInputDropsOnlyGuardBounds(t *testing.T) {
	in := `{"type":"object","required":["a"],"properties":{"a":{"type":"string","maxLength":100000,"pattern":"^x$","description":"Gone."},"description":{"type":"string"},"b":{"type":"integer","minimum":1,"maximum":100,"default":5000},"c":{"type":"array","maxItems":4,"items":{"enum":[1000]}}}}`
	want := `{"properties":{"a":{"pattern":"^x$","type":"string"},"b":{"default":5000,"maximum":100,"minimum":1,"type":"integer"},"description":{"type":"string"}},"required":["a"],"type":"object"}`
	if got := string(leanInput(json.RawMessage(in), []string{"c", "missing"})); got != want {
		t.Fatalf("leanInput:\n got %s\nwant %s", got, want)
	}
}
