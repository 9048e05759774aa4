package joplinops_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
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

// TestReusedTagStaysFreshAcrossARestart: the view keeps the tags a scope
// claimed in the state directory, so after a restart the reused hidden tag
// still answers as the fresh, empty tag the caller made.
func TestReusedTagStaysFreshAcrossARestart(t *testing.T) {
	_, url, tf := joplinfake.Serve(t, token)
	state := t.TempDir()
	h := newScopedHarnessWith(t, url, tf, joplinindex.MeaningConfig{}, state)
	w := seedWorld(t, h)
	res, derr := h.callers(t, scopeOfWorld)[3].call("create_tag", map[string]any{"title": "Secret-Tag"})
	if derr != nil || !strings.Contains(string(res), w.ids["$secretTag"]) {
		t.Fatalf("reuse: %s %v", res, derr)
	}
	if fi, err := os.Stat(filepath.Join(state, scopeview.ClaimsFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("claims file: %v %v", fi, err)
	}
	h = newScopedHarnessWith(t, url, tf, joplinindex.MeaningConfig{}, state) // a restart
	for _, who := range h.callers(t, scopeOfWorld) {
		res, derr := who.call("list_tags", map[string]any{})
		if derr != nil || !strings.Contains(string(res), `{"id":"`+w.ids["$secretTag"]+`","title":"Secret-Tag"}`) {
			t.Errorf("%s: list_tags after a restart: %s %v", who.name, res, derr)
		}
		res, derr = who.call("list_notes", map[string]any{"tag_id": w.ids["$secretTag"]})
		if derr != nil || strings.Contains(string(res), w.ids["$out"]) {
			t.Errorf("%s: list_notes by the reused tag after a restart: %s %v", who.name, res, derr)
		}
	}
}
