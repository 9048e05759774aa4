package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// benchArgBytes is the size of the text argument of the benchmarked call:
// about a base64-encoded 6 MiB resource.
const benchArgBytes = 8 << 20

// benchLine is one stdio tools/call of the sink tool with a benchArgBytes
// text argument.
func benchLine() []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sink","arguments":{"text":"` +
		strings.Repeat("QUJD", benchArgBytes/4) + `"}}}`)
}

// sinkServer serves one stdio tool whose handler ignores its arguments, so
// a call costs what reading, validating and answering it costs.
func sinkServer(b *testing.B) *Server {
	b.Helper()
	in := fmt.Sprintf(`{"type":"object","properties":{"text":{"type":"string","maxLength":%d}},"required":["text"],"additionalProperties":false}`, benchArgBytes)
	reg, err := registry.New(registry.Operation{
		Name: "sink", Title: "sink", Description: "Test.", Toolset: "test", Effect: registry.EffectRead,
		InputSchema:  json.RawMessage(in),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Exposure:     []registry.Transport{registry.MCPStdio},
		Handler:      func(context.Context, json.RawMessage) (any, error) { return json.RawMessage(`{}`), nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	ex, err := executor.New(reg, executor.Limits{MaxArgBytes: 2 * benchArgBytes, MaxDepth: 64, MaxActive: 4})
	if err != nil {
		b.Fatal(err)
	}
	return NewServer(ex, registry.MCPStdio, "bench")
}

// BenchmarkStdioToolCall serves one stdio line holding a tools/call with
// an 8 MiB argument: reading the line, the fast path's reading of the
// message, the executor's checks and schema validation, a handler that
// returns at once, and the response.
func BenchmarkStdioToolCall(b *testing.B) {
	srv, line := sinkServer(b), append(benchLine(), '\n')
	var out bytes.Buffer
	if err := ServeStdio(context.Background(), srv, bytes.NewReader(line), &out, len(line), slog.New(slog.DiscardHandler)); err != nil || !strings.Contains(out.String(), `"structuredContent":{}`) {
		b.Fatalf("the call failed: %v %.300s", err, out.String())
	}
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := ServeStdio(context.Background(), srv, bytes.NewReader(line), io.Discard, len(line), slog.New(slog.DiscardHandler)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseToolCall reads the message of the call above as the fast
// path does, nothing else.
func BenchmarkParseToolCall(b *testing.B) {
	line := benchLine()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, ok := parseToolCall(line); !ok {
			b.Fatal("not a plain tools/call")
		}
	}
}
