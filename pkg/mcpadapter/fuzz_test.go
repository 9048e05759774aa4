package mcpadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/notebridge/notebridge/pkg/registry"
)

// FuzzServeStdio feeds arbitrary bytes to the stdio loop: it must return,
// and every output line must be exactly one JSON-RPC message.
func FuzzServeStdio(f *testing.F) {
	srv := NewServer(testExecutor(f), registry.MCPStdio, "fuzz")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	f.Add([]byte("not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo_text\",\"arguments\":{\"text\":\"a\"}}}"))
	f.Add([]byte("\n\r\n{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := ServeStdio(context.Background(), srv, bytes.NewReader(in), &out, 256, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("output line is not one JSON-RPC message: %q", sc.Text())
			}
		}
	})
}
