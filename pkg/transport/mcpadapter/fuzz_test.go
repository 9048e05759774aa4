package mcpadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
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

// FuzzParseToolCall: a message parseToolCall accepts is valid JSON, and
// encoding/json reads the same id, tool name and arguments from it.
func FuzzParseToolCall(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"_meta":{"progressToken":1},"name":"e\u0063ho","arguments":{ }}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":-1.5e3,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,{"b":"\""}]}}} `))
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, ok := parseToolCall(msg)
		if !ok {
			return
		}
		if !json.Valid(msg) {
			t.Fatalf("accepted invalid JSON %q", msg)
		}
		var m struct {
			ID     any `json:"id"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("%q: %v", msg, err)
		}
		if m.ID != c.id || m.Params.Name != c.name || !bytes.Equal(m.Params.Arguments, c.args.Bytes()) {
			t.Fatalf("%q: parsed %v %q %q, encoding/json %v %q %q", msg, c.id, c.name, c.args.Bytes(), m.ID, m.Params.Name, m.Params.Arguments)
		}
		// Scanned on their own, the arguments nest as deep (jsonscan's
		// fuzz tests hold that depth to a real decoder's).
		alone, _ := jsonscan.NewScanner(c.args.Bytes()).Value()
		if c.args.Depth() != alone.Depth() {
			t.Fatalf("%q: arguments depth %d in the message, %d alone", msg, c.args.Depth(), alone.Depth())
		}
	})
}
