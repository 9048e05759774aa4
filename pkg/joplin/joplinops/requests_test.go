package joplinops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// seedNote creates a note directly in Joplin and returns its id.
func seedNote(t testing.TB, h *harness, notebook, title string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	body := map[string]any{"title": title, "parent_id": notebook, "body": "line one\nline two"}
	if err := h.env.Joplin.Write(context.Background(), "POST", "/notes", nil, body, &out); err != nil {
		t.Fatal(err)
	}
	return out.ID
}

// countSince returns the requests the fake received after the first n.
func countSince(fake *joplinfake.Server, n int) []joplinfake.Request {
	return fake.Requests()[n:]
}

// call runs one operation and decodes its result into out.
func call(t *testing.T, h *harness, name string, args, out any) {
	t.Helper()
	res, derr := h.env.Call(context.Background(), name, args)
	if derr != nil {
		t.Fatalf("%s: %v (%v)", name, derr, derr.Details)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatalf("%s: %s: %v", name, res, err)
		}
	}
}

// TestListNotesOfNotebookIsOneJoplinRequest pages a 250-note notebook: each
// page is one Joplin request, sorted and paged by Joplin.
func TestListNotesOfNotebookIsOneJoplinRequest(t *testing.T) {
	h := newHarness(t)
	nb := scenarios.Folder(t, h.env, "Big", "")
	for i := range 250 {
		seedNote(t, h, nb, fmt.Sprintf("n%03d", i))
	}
	for _, tc := range []struct {
		page, want int
		first      string
		more       bool
	}{{1, 100, "n000", true}, {3, 50, "n200", false}} {
		before := len(h.fake.Requests())
		var out struct {
			Notes []struct {
				Title string `json:"title"`
			} `json:"notes"`
			HasMore bool `json:"has_more"`
		}
		call(t, h, "list_notes", map[string]any{"notebook_id": nb, "order_by": "title", "order_dir": "asc", "limit": 100, "page": tc.page}, &out)
		reqs := countSince(h.fake, before)
		if len(reqs) != 1 || reqs[0].Path != "/folders/"+nb+"/notes" {
			t.Fatalf("page %d: want exactly 1 Joplin request, got %d: %v", tc.page, len(reqs), reqs)
		}
		if len(out.Notes) != tc.want || out.Notes[0].Title != tc.first || out.HasMore != tc.more {
			t.Fatalf("page %d: %d notes, first %q, has_more %v", tc.page, len(out.Notes), out.Notes[0].Title, out.HasMore)
		}
	}
}

// TestListNotesOfMissingNotebookIsNotFound: Joplin answers a missing
// notebook's note list with a 500; the bridge still says NOT_FOUND.
func TestListNotesOfMissingNotebookIsNotFound(t *testing.T) {
	h := newHarness(t)
	res, derr := h.env.Call(context.Background(), "list_notes", map[string]any{"notebook_id": "0123456789abcdef0123456789abcdef"})
	if derr == nil || derr.Code != domainerr.NotFound || derr.Details["missing"] != "notebook" {
		t.Fatalf("want NOT_FOUND notebook, got %v %v (%s)", derr, derr.Details, res)
	}
}

// TestCreateTagPreflightIsOneSearch: with 150 tags in Joplin, create_tag
// costs one tag search and the write, and the search still finds every tag
// whose title normalizes like the new one (case folding, ligatures, ß,
// spaces), though SQL LIKE only folds ASCII case.
func TestCreateTagPreflightIsOneSearch(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for i := range 150 {
		if err := h.env.Joplin.Write(ctx, "POST", "/tags", nil, map[string]any{"title": fmt.Sprintf("zz %03d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := len(h.fake.Requests())
	var tag struct {
		ID string `json:"id"`
	}
	call(t, h, "create_tag", map[string]any{"title": "planning"}, &tag)
	reqs := countSince(h.fake, before)
	if len(reqs) != 2 || reqs[0].Path != "/search" || reqs[1].Method != "POST" {
		t.Fatalf("want one search and the write, got %v", reqs)
	}
	for stored, variant := range map[string]string{
		"ﬁle":         "FILE",
		"straße":      "STRASSE",
		"  a   b  ":   "A B",
		"Kelvin":      "\u212Aelvin",
		"100% done_x": "100% DONE_X",
	} {
		if err := h.env.Joplin.Write(ctx, "POST", "/tags", nil, map[string]any{"title": stored}, nil); err != nil {
			t.Fatal(err)
		}
		before := len(h.fake.Requests())
		_, derr := h.env.Call(ctx, "create_tag", map[string]any{"title": variant})
		if derr == nil || derr.Code != domainerr.TagAlreadyExists {
			t.Fatalf("create_tag %q with %q stored: want TAG_ALREADY_EXISTS, got %v", variant, stored, derr)
		}
		if n := len(countSince(h.fake, before)); n != 1 {
			t.Fatalf("create_tag %q: %d requests, want the one search: %v", variant, n, countSince(h.fake, before))
		}
	}
	if h.fake.CountWrites() != 150+1+5 {
		t.Fatalf("writes: %d", h.fake.CountWrites())
	}
}

// TestTagNoteIsTwoJoplinRequests: tag_note reads the note and writes; an
// already tagged note is told by Joplin's empty answer.
func TestTagNoteIsTwoJoplinRequests(t *testing.T) {
	h := newHarness(t)
	nb := scenarios.Folder(t, h.env, "Inbox", "")
	note := seedNote(t, h, nb, "n")
	var tag struct {
		ID string `json:"id"`
	}
	call(t, h, "create_tag", map[string]any{"title": "t"}, &tag)
	for _, already := range []bool{false, true} {
		before := len(h.fake.Requests())
		var out struct {
			AlreadyTagged bool `json:"already_tagged"`
		}
		call(t, h, "tag_note", map[string]any{"note_id": note, "tag_id": tag.ID}, &out)
		if n := len(countSince(h.fake, before)); n != 2 || out.AlreadyTagged != already {
			t.Fatalf("tag_note: %d requests, already_tagged %v; want 2, %v", n, out.AlreadyTagged, already)
		}
	}
	_, derr := h.env.Call(context.Background(), "tag_note", map[string]any{"note_id": note, "tag_id": "0123456789abcdef0123456789abcdef"})
	if derr == nil || derr.Code != domainerr.NotFound || derr.Details["missing"] != "tag" {
		t.Fatalf("missing tag: %v", derr)
	}
}
