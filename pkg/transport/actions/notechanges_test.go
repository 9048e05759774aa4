package actions_test

import (
	"encoding/json"
	"testing"

	"github.com/notebridge/notebridge/pkg/transport/actions"
)

// TestNoteChangesConsequentiality: previewing note changes is a read
// (x-openai-isConsequential false); applying and undoing them write (true)
// and answer PLAN_MISMATCH, RECEIPT_CONFLICT and UNDO_CONFLICT with 409
// (issue #17).
func TestNoteChangesConsequentiality(t *testing.T) {
	raw, err := actions.Document(catalogRegistry(t), origin, "test")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Consequential *bool `json:"x-openai-isConsequential"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"preview_note_changes": false, "apply_note_changes": true, "undo_note_changes": true} {
		op, ok := doc.Paths["/v1/"+name]["post"]
		if !ok || op.Consequential == nil || *op.Consequential != want {
			t.Errorf("%s: x-openai-isConsequential %v, want %v", name, op.Consequential, want)
		}
	}
	if actions.Status("PLAN_MISMATCH") != 409 || actions.Status("UNDO_CONFLICT") != 409 || actions.Status("RECEIPT_CONFLICT") != 409 {
		t.Error("PLAN_MISMATCH, RECEIPT_CONFLICT and UNDO_CONFLICT must answer 409")
	}
}
