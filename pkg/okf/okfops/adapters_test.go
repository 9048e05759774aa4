package okfops

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// TestThroughMCPAdapters runs the OKF tools through the real MCP stdio and
// Streamable HTTP adapters: stdio always lists them; HTTP lists them only
// with operator-configured roots and then refuses paths outside them.
func TestThroughMCPAdapters(t *testing.T) {
	dir := ownBundle(t, instantBundle)
	build := func(cfg Config) *executor.Executor {
		reg, err := registry.New(Operations(cfg)...)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	ctx := context.Background()
	listed := func(c interface {
		ListTools(context.Context, mcp.ListToolsRequest) (*mcp.ListToolsResult, error)
	}) int {
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Tools)
	}

	stdio := mcptest.InProcessStdio(t, mcpadapter.NewServer(build(Config{}), registry.MCPStdio, "test"))
	if n := listed(stdio); n != len(Operations(Config{})) {
		t.Fatalf("stdio lists %d OKF tools, want all", n)
	}
	call := mcptest.Caller(t, stdio)
	raw, derr := call(ctx, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings"})
	if derr != nil {
		t.Fatal(derr)
	}
	var got map[string]any
	json.Unmarshal(raw, &got)
	if got["projection"].(map[string]any)["trust_tier"] != "claimed-human-review" {
		t.Fatalf("read over stdio: %s", raw)
	}

	noRoots := mcptest.HTTP(t, mcpadapter.NewServer(build(Config{}), registry.MCPHTTP, "test"))
	if n := listed(noRoots); n != 0 {
		t.Fatalf("HTTP without roots lists %d OKF tools, want 0", n)
	}
	if _, derr := mcptest.Caller(t, noRoots)(ctx, "list_concepts", map[string]any{"bundle_path": dir}); derr == nil {
		t.Fatal("HTTP without roots ran an OKF tool")
	}

	rooted := mcptest.HTTP(t, mcpadapter.NewServer(build(Config{AllowedRoots: []string{dir}}), registry.MCPHTTP, "test"))
	if n := listed(rooted); n != len(Operations(Config{})) {
		t.Fatalf("HTTP with roots lists %d OKF tools, want all", n)
	}
	hcall := mcptest.Caller(t, rooted)
	if _, derr := hcall(ctx, "list_concepts", map[string]any{"bundle_path": dir}); derr != nil {
		t.Fatal(derr)
	}
	_, derr = hcall(ctx, "list_concepts", map[string]any{"bundle_path": filepath.Dir(dir)})
	wantCode(t, derr, "PATH_REJECTED")
}
