package toolsets

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// sizeGoals are the issue #14 budgets for the tools/list result, in compact
// JSON bytes as sent on the wire; 0 means no goal.
var sizeGoals = []struct {
	toolsets []string
	readOnly bool
	goal     int
}{
	{[]string{"joplin"}, false, 15_000},
	{[]string{"okf"}, false, 0},
	{[]string{"joplin", "okf"}, false, 32_000},
	{[]string{"joplin"}, true, 0},
	{[]string{"joplin", "okf"}, true, 0},
}

// toolsListResult returns the result member of the MCP tools/list answer
// over stdio (the transport exposing every operation), as sent.
func toolsListResult(tb testing.TB, toolsets []string, readOnly bool) (result []byte, outputSchemaBytes, tools int) {
	tb.Helper()
	jc, err := joplin.New(joplin.Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		tb.Fatal(err)
	}
	reg, err := Build(Config{Joplin: jc, JoplinLimits: joplinops.DefaultLimits, Enabled: toolsets, ReadOnly: readOnly})
	if err != nil {
		tb.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		tb.Fatal(err)
	}
	srv := mcpadapter.NewServer(ex, registry.MCPStdio, "size")
	resp, err := json.Marshal(srv.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
	if err != nil {
		tb.Fatal(err)
	}
	var v struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(resp, &v); err != nil || len(v.Result) == 0 {
		tb.Fatalf("tools/list answer: %s", resp)
	}
	for _, op := range reg.Exposed(registry.MCPStdio) {
		outputSchemaBytes += len(op.OutputSchema)
	}
	return v.Result, outputSchemaBytes, len(reg.Exposed(registry.MCPStdio))
}

// BenchmarkCatalogSize reports, per toolset combination and profile, the
// bytes of the tools/list result every MCP session pays in model tokens,
// and whether each is within its issue #14 goal. Missing a goal is stated
// in the report, not failed as a test.
//
//	go test ./pkg/toolsets -run '^$' -bench CatalogSize -benchtime 1x
func BenchmarkCatalogSize(b *testing.B) {
	for _, g := range sizeGoals {
		name := strings.Join(g.toolsets, "+")
		if g.readOnly {
			name += "/read-only"
		}
		b.Run(name, func(b *testing.B) {
			var result []byte
			var out, tools int
			for i := 0; i < b.N; i++ {
				result, out, tools = toolsListResult(b, g.toolsets, g.readOnly)
			}
			b.ReportMetric(float64(len(result)), "tools_list_bytes")
			b.ReportMetric(float64(out), "output_schema_bytes")
			b.ReportMetric(float64(tools), "tools")
			switch {
			case g.goal == 0:
				b.Logf("%s: %d B for %d tools (no goal)", name, len(result), tools)
			case len(result) <= g.goal:
				b.Logf("%s: %d B for %d tools: within the goal of %d B", name, len(result), tools, g.goal)
			default:
				b.Logf("%s: %d B for %d tools: MISSES the goal of %d B by %d B", name, len(result), tools, g.goal, len(result)-g.goal)
			}
		})
	}
}
