package toolsets

import (
	"encoding/json"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// maxCoreModelBytes is the budget of the core profile's catalog as clients
// hand it to the model: name, description and input schema per tool.
const maxCoreModelBytes = 4000

// modelVisible is what a client sends the model of a tools/list answer:
// each tool's name, description and input schema (clients drop
// outputSchema and annotations), compact.
func modelVisible(t testing.TB, answer []byte) (int, int) {
	t.Helper()
	var v struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v.Result.Tools)
	return len(b), len(v.Result.Tools)
}

// TestCoreProfile: the core profile lists the core tools plus find_tools
// and call_tool within the model budget; its own snapshots hold it.
func TestCoreProfile(t *testing.T) {
	core, err := ParseProfile(ProfileCore)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := ParseProfile(""); err != nil || p != nil {
		t.Fatalf("default profile: %v %v", p, err)
	}
	if _, err := ParseProfile("some"); err == nil {
		t.Fatal("unknown profile accepted")
	}
	reg := fullRegistry(t)
	for _, name := range core {
		if _, ok := reg.Lookup(name); !ok {
			t.Fatalf("core tool %s is not an operation", name)
		}
	}
	for _, tr := range []registry.Transport{registry.MCPStdio, registry.MCPHTTP} {
		checkToolSnaps(t, "core."+string(tr), toolsListFor(t, reg, tr, mcpadapter.Core(core, CoreHidden)))
	}
	size, n := modelVisible(t, toolsListFor(t, reg, registry.MCPStdio, mcpadapter.Core(core, CoreHidden)))
	full, all := modelVisible(t, toolsListFor(t, reg, registry.MCPStdio))
	t.Logf("model-visible catalog: core %d bytes, %d tools; all %d bytes, %d tools", size, n, full, all)
	if n != len(core)+2 {
		t.Errorf("core lists %d tools, want %d and find_tools, call_tool", n, len(core))
	}
	if size > maxCoreModelBytes {
		t.Errorf("core catalog is %d model-visible bytes, budget %d", size, maxCoreModelBytes)
	}
}
