package joplinops_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/actionstest"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
	"github.com/notebridge/notebridge/pkg/transport/actions"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// TestScenariosThroughMCPAdapters runs every scenario against the fake
// Joplin through real MCP clients: an in-process stdio pipe, Streamable
// HTTP, and the built binary over stdio.
func TestScenariosThroughMCPAdapters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Run("in-process stdio", func(t *testing.T) {
		h := newHarness(t)
		c := mcptest.InProcessStdio(t, mcpadapter.NewServer(h.exec, registry.MCPStdio, "test"))
		env := h.env
		env.Call = mcptest.Caller(t, c)
		scenarios.All(t, env)
	})
	t.Run("streamable http", func(t *testing.T) {
		h := newHarness(t)
		c := mcptest.HTTP(t, mcpadapter.NewServer(h.exec, registry.MCPHTTP, "test"))
		env := h.env
		env.Call = mcptest.Caller(t, c)
		scenarios.All(t, env)
	})
	t.Run("binary stdio", func(t *testing.T) {
		h := newHarness(t)
		bin := mcptest.BuildBinary(t, mcptest.ModuleRoot(t))
		tokenFile := filepath.Join(t.TempDir(), "token")
		os.WriteFile(tokenFile, []byte(token), 0o600)
		c := mcptest.Binary(t, bin, "--joplin-url", h.url, "--joplin-token-file", tokenFile, "--state-dir", t.TempDir())
		env := h.env
		env.Call = mcptest.Caller(t, c)
		scenarios.All(t, env)
	})
}

// TestScenariosThroughActions runs every scenario against the fake Joplin
// through the GPT Actions HTTP surface.
func TestScenariosThroughActions(t *testing.T) {
	h := newHarness(t)
	env := h.env
	env.Call = actionstest.Caller(t, h.exec)
	env.MaxResponseChars = actions.MaxResponseChars
	scenarios.All(t, env)
}
