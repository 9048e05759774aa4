package toolsets

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// TestNoOperationRunsWithoutAPrincipal: every operation of the real
// catalog, on every transport it is exposed on, is refused with
// UNAUTHENTICATED when the call carries no principal: straight through the
// executor, and through the MCP tool handler with a context the transport
// put no caller in. No handler runs.
func TestNoOperationRunsWithoutAPrincipal(t *testing.T) {
	var calls atomic.Int32
	reg := countingCatalog(t, false, &calls)
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	servers := map[registry.Transport]*mcpadapter.Server{
		registry.MCPStdio: mcpadapter.NewServer(ex, registry.MCPStdio, "test"),
		registry.MCPHTTP:  mcpadapter.NewServer(ex, registry.MCPHTTP, "test"),
	}
	for _, op := range reg.Operations() {
		for _, tr := range op.Exposure {
			if _, derr := ex.Call(context.Background(), principal.Principal{}, tr, op.Name, json.RawMessage(`{}`)); derr == nil || derr.Code != domainerr.Unauthenticated {
				t.Errorf("executor %s over %s without a principal: %v", op.Name, tr, derr)
			}
			srv := servers[tr]
			if srv == nil {
				continue
			}
			msg := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + op.Name + `","arguments":{}}}`
			resp, _ := json.Marshal(srv.HandleMessage(context.Background(), json.RawMessage(msg)))
			if !strings.Contains(string(resp), `"isError":true`) || !strings.Contains(string(resp), string(domainerr.Unauthenticated)) {
				t.Errorf("MCP %s tools/call %s without a principal: %s", tr, op.Name, resp)
			}
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d handlers ran without a principal", n)
	}
}
