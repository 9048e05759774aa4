//go:build integration

package joplinops_test

import (
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// TestRealJoplinNotebookScopes runs the read half of the leak matrix, then
// the write rules, on one world in a real Joplin container (the writes of
// the matrix each need a fresh Joplin; they run against the fake).
func TestRealJoplinNotebookScopes(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	h := newScopedHarnessAt(t, j.URL(), j.TokenFile)
	w := seedWorld(t, h)
	checkLeakMatrix(t, h, w, nil)
	checkWriteRules(t, h, w)
}

// TestRealJoplinScopedScanPastAPageOfHiddenNotes: issue 31's defect 2
// against real Joplin: 100 hidden notes ahead of the visible ones.
func TestRealJoplinScopedScanPastAPageOfHiddenNotes(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	checkScanPastHiddenPage(t, newScopedHarnessAt(t, j.URL(), j.TokenFile))
}
