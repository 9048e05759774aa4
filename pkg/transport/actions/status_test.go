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

// TestStorageFullIsInsufficientStorage: a full state disk is 507 on
// Actions, not 500.
func TestStorageFullIsInsufficientStorage(t *testing.T) {
	if got := Status(domainerr.StorageFull); got != http.StatusInsufficientStorage {
		t.Fatalf("STORAGE_FULL: %d", got)
	}
}
