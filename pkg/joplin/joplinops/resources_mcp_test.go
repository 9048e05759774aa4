package joplinops_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/eventwait"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// TestNotesAsMCPResources runs the resource checks against the fake Joplin
// over stdio and Streamable HTTP, with enough notes for two pages.
func TestNotesAsMCPResources(t *testing.T) {
	h := newHarness(t)
	nb := scenarios.Folder(t, h.env, "Many", "")
	for i := 0; i < 55; i++ {
		scenarios.SeedNote(t, h.env, nb, "n", "")
	}
	t.Run("stdio", func(t *testing.T) {
		scenarios.MCPResources(t, mcptest.InProcessStdio(t, mcpadapter.NewServer(h.exec, registry.MCPStdio, "test")), h.env)
	})
	t.Run("http", func(t *testing.T) {
		scenarios.MCPResources(t, mcptest.HTTP(t, mcpadapter.NewServer(h.exec, registry.MCPHTTP, "test")), h.env)
	})
}

// TestMCPResourcesAreScoped: a token without notes:read lists and reads no
// note resources.
func TestMCPResourcesAreScoped(t *testing.T) {
	h := newHarness(t)
	nb := scenarios.Folder(t, h.env, "Private", "")
	id := scenarios.SeedNote(t, h.env, nb, "Secret", "body")
	srv := mcpadapter.NewServer(h.exec, registry.MCPHTTP, "test")
	okfOnly := principal.With(context.Background(), principal.OAuth("g", scope.NewSet(scope.OKFRead), notebookscope.Everything()))
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"joplin://note/` + id + `"}}`,
	} {
		resp, _ := json.Marshal(srv.HandleMessage(okfOnly, json.RawMessage(msg)))
		if !strings.Contains(string(resp), "INSUFFICIENT_SCOPE") || strings.Contains(string(resp), "Secret") || strings.Contains(string(resp), "body") {
			t.Errorf("%s: %s", msg, resp)
		}
	}
	readOK := principal.With(context.Background(), principal.OAuth("g", scope.NewSet(scope.NotesRead), notebookscope.Everything()))
	resp, _ := json.Marshal(srv.HandleMessage(readOK, json.RawMessage(`{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}`)))
	if !strings.Contains(string(resp), "joplin://note/"+id) {
		t.Errorf("notes:read: %s", resp)
	}
}

// TestResourcesListChangedAfterANoteWrite: a note write the bridge makes
// sends notifications/resources/list_changed to connected clients.
func TestResourcesListChangedAfterANoteWrite(t *testing.T) {
	h := newHarness(t)
	srv := mcpadapter.NewServer(h.exec, registry.MCPStdio, "test")
	h.env.Joplin.Observe(func(_ context.Context, w joplin.Write) {
		if w.Kind == joplin.NoteSaved {
			mcpadapter.NotifyResourcesChanged(srv, func(principal.Principal) bool { return true })
		}
	})
	c := mcptest.InProcessStdio(t, srv)
	got := make(chan string, 10)
	c.OnNotification(func(n mcp.JSONRPCNotification) { got <- n.Method })
	nb := scenarios.Folder(t, h.env, "Watched", "")
	if _, derr := h.env.Call(context.Background(), "create_note", map[string]any{"notebook_id": nb, "title": "New"}); derr != nil {
		t.Fatal(derr)
	}
	select {
	case m := <-got:
		if m != string(mcp.MethodNotificationResourcesListChanged) {
			t.Fatalf("notification %q", m)
		}
	case <-eventwait.GiveUp(t):
		t.Fatal("no notification after the write")
	}
}
