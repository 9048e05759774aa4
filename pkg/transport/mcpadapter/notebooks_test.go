package mcpadapter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// TestStaticTokenCarriesItsNotebooks: the static MCP token's notebook
// setting reaches the handler's principal.
func TestStaticTokenCarriesItsNotebooks(t *testing.T) {
	out := json.RawMessage(`{"type":"object","properties":{"read":{"type":"string","maxLength":100}},"required":["read"],"additionalProperties":false}`)
	reg, err := registry.New(registry.Operation{
		Name: "whoami", Title: "Who am I", Description: "Name the caller's notebooks.", Toolset: "test",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: out, Effect: registry.EffectRead,
		Exposure: []registry.Transport{registry.MCPHTTP},
		Handler: registry.Typed(func(ctx context.Context, _ struct{}) (any, error) {
			p, _ := principal.From(ctx)
			return map[string]string{"read": p.Notebooks().Read.String()}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	sc := notebookscope.New(notebookscope.Only("Work/Clients"), notebookscope.Only("Work/Clients"))
	h := newGuardedHTTP(t, ex, HTTPConfig{TokenNotebooks: &sc})
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	resp, _ := post(t, h.srv.URL+Path, initBody("2025-06-18"), auth)
	auth["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
	auth["MCP-Protocol-Version"] = "2025-06-18"
	post(t, h.srv.URL+Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, auth)
	_, body := post(t, h.srv.URL+Path, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, auth)
	if !strings.Contains(body, `\"read\":\"Work/Clients\"`) && !strings.Contains(body, `"read":"Work/Clients"`) {
		t.Fatalf("the handler saw: %s", body)
	}
}
