package toolsets

import (
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

// TestEveryOperationHasAScope: every toolset of the catalog maps to OAuth
// scopes, so no operation is out of reach of every token, and reads need a
// :read scope while every other effect needs :write.
func TestEveryOperationHasAScope(t *testing.T) {
	ops := fullRegistry(t).Operations()
	seen := map[scope.Scope]bool{}
	for _, op := range ops {
		need, ok := scope.Required(op)
		if !ok {
			t.Errorf("%s (toolset %q) has no OAuth scope", op.Name, op.Toolset)
			continue
		}
		seen[need] = true
		read := op.Effect == registry.EffectRead
		if want := map[bool]string{true: ":read", false: ":write"}[read]; len(need) < len(want) || string(need[len(need)-len(want):]) != want {
			t.Errorf("%s (effect %s) needs %s", op.Name, op.Effect, need)
		}
	}
	for _, s := range scope.All {
		if !seen[s] {
			t.Errorf("no operation needs %s: is the toolset table stale?", s)
		}
	}
}
