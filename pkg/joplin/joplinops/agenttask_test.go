package joplinops_test

import (
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// agentTaskRequests is what the scripted agent task costs: search 1,
// get_note 1, update_note 1 (the write), create_tag 2 (the duplicate
// search the contract requires, the write), tag_note 2 (the note exists,
// the write), get_note 1. It was 12 before issue 14 (a competing server
// needs 8, with no preflight at all).
const agentTaskRequests = 8

// TestAgentTaskJoplinRequests runs the scripted agent task of
// docs/benchmarks.md (search, read, change one line, create a tag, tag the
// note, read again) and counts the Joplin requests it costs.
func TestAgentTaskJoplinRequests(t *testing.T) {
	h := newHarness(t)
	nb := scenarios.Folder(t, h.env, "Projects", "")
	seedNote(t, h, nb, "Roadmap")
	seedNote(t, h, nb, "Other")
	h.fake.ReindexSearch()
	before := len(h.fake.Requests())

	var found struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	call(t, h, "search", map[string]any{"query": "Roadmap", "type": "note"}, &found)
	if len(found.Items) != 1 {
		t.Fatalf("search: %+v", found)
	}
	id := found.Items[0].ID
	var note struct {
		Body string `json:"body"`
	}
	call(t, h, "get_note", map[string]any{"id": id}, &note)
	call(t, h, "update_note", map[string]any{"id": id, "body": "line one\nline 2"}, nil)
	var tag struct {
		ID string `json:"id"`
	}
	call(t, h, "create_tag", map[string]any{"title": "planning"}, &tag)
	call(t, h, "tag_note", map[string]any{"note_id": id, "tag_id": tag.ID}, nil)
	call(t, h, "get_note", map[string]any{"id": id}, &note)
	if note.Body != "line one\nline 2" {
		t.Fatalf("body after update: %q", note.Body)
	}

	reqs := h.fake.Requests()[before:]
	for _, r := range reqs {
		t.Logf("%s %s", r.Method, r.Path)
	}
	if len(reqs) != agentTaskRequests {
		t.Fatalf("the agent task cost %d Joplin requests, want %d", len(reqs), agentTaskRequests)
	}
}
