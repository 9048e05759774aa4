package writejournal

import (
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
)

// TestUncertainEntryKeepsOnlyIdentifiers: journal entries carry object ids
// and the OKF idempotency key, never other details, and say what is known
// for the store that failed.
func TestUncertainEntryKeepsOnlyIdentifiers(t *testing.T) {
	okf := UncertainEntry(executor.UncertainWrite{Operation: "apply_concept_patch", Err: &domainerr.Error{
		Code: domainerr.WriteOutcomeUnknown, Details: map[string]any{"idempotency_key": "abc", "body": "SECRET-BODY"},
	}})
	if okf.Objects["idempotency_key"] != "abc" || len(okf.Objects) != 1 || !strings.Contains(okf.Known, "OKF") {
		t.Fatalf("okf entry: %+v", okf)
	}
	jop := UncertainEntry(executor.UncertainWrite{Operation: "create_note", Err: &domainerr.Error{
		Code: domainerr.WriteOutcomeUnknown, Details: map[string]any{"id": "n1", "title": "SECRET-TITLE"},
	}})
	if jop.Objects["id"] != "n1" || len(jop.Objects) != 1 || !strings.Contains(jop.Known, "Joplin") {
		t.Fatalf("joplin entry: %+v", jop)
	}
}
