package joplinops_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// TestLongNoteReadsAreBounded: a note far beyond get_note's default cut
// is bounded on every read that does not ask for the whole body (fetch,
// a section, the default view): cut at MaxInlineBody, with the outline and
// a hint; the whole body beyond the ceiling is RESPONSE_TOO_LARGE, naming
// how to read it in parts. Before, fetch and a section answered it whole.
func TestLongNoteReadsAreBounded(t *testing.T) {
	h := newHarness(t)
	nb := scenarios.Folder(t, h.env, "Long", "")
	body := "# Big\n" + strings.Repeat("a line of the big section\n", 60_000) + "# Small\nshort\n"
	if len(body) <= joplinops.DefaultMaxWholeBody {
		t.Fatalf("the body (%d bytes) must exceed the whole-body ceiling", len(body))
	}
	id := scenarios.SeedNote(t, h.env, nb, "Long note", body)
	read := func(name string, args map[string]any) (map[string]any, *domainerr.Error) {
		raw, derr := h.env.Call(context.Background(), name, args)
		if derr != nil {
			return nil, derr
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		if len(raw) > 2*joplinops.MaxInlineBody+200_000 {
			t.Errorf("%s %v: a %d-byte answer", name, args, len(raw))
		}
		return out, nil
	}

	f, derr := read("fetch", map[string]any{"id": id})
	if derr != nil {
		t.Fatal(derr)
	}
	meta, _ := f["metadata"].(map[string]any)
	if text, _ := f["text"].(string); len(text) > joplinops.MaxInlineBody || !strings.HasPrefix(text, "# Big\n") ||
		meta["truncated"] != "true" || !strings.Contains(meta["more"].(string), "section") {
		t.Errorf("fetch: %d bytes of text, metadata %v", len(text), meta)
	}

	for _, args := range []map[string]any{{"id": id, "view": "section", "heading": "Big"}, {"id": id}} {
		n, derr := read("get_note", args)
		if derr != nil {
			t.Fatal(derr)
		}
		if b, _ := n["body"].(string); len(b) > joplinops.MaxInlineBody || n["body_truncated"] != true || n["outline"] == nil || n["more"] == nil {
			t.Errorf("get_note %v: %d bytes, truncated %v", args, len(b), n["body_truncated"])
		}
	}
	if n, derr := read("get_note", map[string]any{"id": id, "view": "section", "heading": "Small"}); derr != nil || n["body"] != "# Small\nshort\n" {
		t.Errorf("a small section: %v %v", n["body"], derr)
	}

	_, derr = read("get_note", map[string]any{"id": id, "view": "full"})
	if derr == nil || derr.Code != domainerr.ResponseTooLarge || !strings.Contains(derr.Message, "section") || derr.Details["max_bytes"] != joplinops.DefaultMaxWholeBody {
		t.Errorf("whole body beyond the ceiling: %+v", derr)
	}
}
