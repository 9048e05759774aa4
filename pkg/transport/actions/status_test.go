package actions

import (
	"net/http"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// TestInsufficientScopeIsForbidden: an OAuth caller's missing scope is 403
// on Actions, like READ_ONLY.
func TestInsufficientScopeIsForbidden(t *testing.T) {
	if got := Status(domainerr.InsufficientScope); got != http.StatusForbidden {
		t.Fatalf("INSUFFICIENT_SCOPE: %d", got)
	}
}
