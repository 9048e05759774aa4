package toolsets

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// BenchmarkExecutorOverhead measures the executor's own cost for one call:
// lookup, exposure, limits, schema validation of a get_note-sized input,
// the concurrency slot, and result encoding, around a handler that returns
// at once. It reports the median per-call time as median-ns.
func BenchmarkExecutorOverhead(b *testing.B) {
	real, ok := fullRegistry(b).Lookup("get_note")
	if !ok {
		b.Fatal("get_note missing")
	}
	result := map[string]any{"id": "0123456789abcdef0123456789abcdef"}
	real.Handler = func(context.Context, json.RawMessage) (any, error) { return result, nil }
	reg, err := registry.New(real)
	if err != nil {
		b.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"id":"0123456789abcdef0123456789abcdef","include_body":true}`)
	ctx := context.Background()
	samples := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, derr := ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "get_note", args); derr != nil {
			b.Fatal(derr)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "median-ns")
}

// BenchmarkBuildCatalog measures startup work: building the registry and
// the executor (which compiles no schema until an operation's first call).
func BenchmarkBuildCatalog(b *testing.B) {
	for i := 0; i < b.N; i++ {
		reg := fullRegistry(b)
		if _, err := executor.New(reg, executor.DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolsListSize reports the size of the MCP tools/list answer:
// every byte is paid in model tokens on every session. It also times
// building the answer.
func BenchmarkToolsListSize(b *testing.B) {
	reg := fullRegistry(b)
	var size int
	for i := 0; i < b.N; i++ {
		size = len(compactToolsList(b, reg))
	}
	b.ReportMetric(float64(size), "bytes")
	b.ReportMetric(float64(size)/float64(reg.Len()), "bytes/tool")
	b.ReportMetric(float64(reg.Len()), "tools")
}
