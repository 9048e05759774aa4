package joplinops_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

// readOnlyWork reads Work and writes nothing.
var readOnlyWork = notebookscope.New(notebookscope.Only("Work"), notebookscope.Only())

// TestCreateTagIsNoExistenceOracle (issue 31, defect 4): a caller that may
// write nothing is refused the create of a tag used only outside its scope
// exactly as that of a new title, on every surface. For a writer, the
// hidden tag it reuses answers every later call (list_tags, list_notes by
// it, tag_note, update_tag, delete_tag) exactly as a fresh tag does.
func TestCreateTagIsNoExistenceOracle(t *testing.T) {
	for k := range 4 {
		h := newScopedHarness(t)
		w := seedWorld(t, h)
		ro := h.callers(t, readOnlyWork)[k]
		var refusals []string
		for _, title := range []string{"SECRET-tag", "never-seen"} {
			_, derr := ro.call("create_tag", map[string]any{"title": title})
			if derr == nil || derr.Code != domainerr.NotebookNotWritable {
				t.Fatalf("%s: create_tag %q by a read-only caller: %v", ro.name, title, derr)
			}
			refusals = append(refusals, derr.Message)
		}
		if refusals[0] != refusals[1] {
			t.Errorf("%s: read-only refusals differ: %q", ro.name, refusals)
		}

		who := h.callers(t, scopeOfWorld)[k]
		reused := tagStory(t, who, w, "Secret-Tag")
		fresh := tagStory(t, who, w, "Fresh-Tag")
		for i := range reused {
			if reused[i] != fresh[i] {
				t.Errorf("%s step %d: the reused hidden tag answers %s, a fresh tag %s", who.name, i, reused[i], fresh[i])
			}
		}
	}
}

// tagStory creates the tag title as who and returns its answers to the
// calls that follow, the tag's id and title set aside.
func tagStory(t *testing.T, who caller, w world, title string) []string {
	t.Helper()
	res, derr := who.call("create_tag", map[string]any{"title": title})
	if derr != nil {
		t.Fatalf("%s: create_tag %q: %v", who.name, title, derr)
	}
	id := idPattern.FindString(string(res))
	out := []string{string(res)}
	step := func(op string, args map[string]any) {
		res, derr := who.call(op, args)
		if derr != nil {
			res = []byte(string(derr.Code) + ": " + derr.Message)
		}
		out = append(out, string(res))
	}
	listed := func() {
		res, derr := who.call("list_tags", map[string]any{})
		if derr != nil {
			t.Fatal(derr)
		}
		entry := `{"id":"` + id + `","title":"` + title + `"}`
		out = append(out, "listed as given: "+map[bool]string{true: "yes", false: "no"}[strings.Contains(string(res), entry)])
	}
	listed()
	step("list_notes", map[string]any{"tag_id": id})
	step("tag_note", map[string]any{"note_id": w.ids["$inboxNote"], "tag_id": id})
	step("list_notes", map[string]any{"tag_id": id})
	listed()
	step("untag_note", map[string]any{"note_id": w.ids["$inboxNote"], "tag_id": id})
	step("list_notes", map[string]any{"tag_id": id})
	step("tag_note", map[string]any{"note_id": w.ids["$inboxNote"], "tag": strings.ToLower(title)})
	step("update_tag", map[string]any{"id": id, "title": "renamed"})
	step("delete_tag", map[string]any{"id": id})
	for i, s := range out {
		s = strings.ReplaceAll(s, id, "<tag>")
		s = strings.ReplaceAll(s, w.ids["$inboxNote"], "<note>")
		out[i] = stripTimes(strings.ReplaceAll(s, title, "<title>"))
	}
	return out
}

// times are the notes' times, which differ between two stories.
var times = regexp.MustCompile(`"(created|updated)_time":[0-9]+`)

func stripTimes(s string) string { return times.ReplaceAllString(s, "") }
