package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// TestUncleanTextReachesTheExecutorRaw: a tool argument holding a lone
// surrogate, invalid UTF-8 or NUL is refused with INVALID_ARGUMENT naming
// the field, through mcp-go (HTTP's path) and the stdio fast path alike:
// neither decodes the arguments before the executor reads their bytes.
func TestUncleanTextReachesTheExecutorRaw(t *testing.T) {
	for _, text := range []string{`a\ud800`, "a\xff", `a\u0000`} {
		msg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo_text","arguments":{"text":"` + text + `"}}}`
		srv := NewServer(testExecutor(t), registry.MCPHTTP, "t")
		resp, _ := json.Marshal(srv.HandleMessage(principal.With(context.Background(), principal.Stdio()), json.RawMessage(msg)))
		if !strings.Contains(string(resp), `INVALID_ARGUMENT`) || !strings.Contains(string(resp), `\"field\":\"/text\"`) {
			t.Errorf("mcp-go %q: %s", text, resp)
		}
		var out bytes.Buffer
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		err := ServeStdio(context.Background(), NewServer(testExecutor(t), registry.MCPStdio, "t"), strings.NewReader(init+"\n"+msg+"\n"), &out, 1<<20, slog.New(slog.DiscardHandler))
		if last := out.String()[strings.LastIndex(strings.TrimSpace(out.String()), "\n")+1:]; err != nil || !strings.Contains(last, `INVALID_ARGUMENT`) || !strings.Contains(last, `\"field\":\"/text\"`) {
			t.Errorf("stdio %q: %s %v", text, out.String(), err)
		}
	}
}
