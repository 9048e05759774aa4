package scenarios

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

// TagScenarios covers the tag operations.
func TagScenarios(t *testing.T, env Env) {
	t.Run("create_rename_delete", func(t *testing.T) { tagLifecycle(t, env) })
	t.Run("tag_and_untag_notes", func(t *testing.T) { tagNotes(t, env) })
}

type tagOut struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func listTags(t *testing.T, env Env) []tagOut {
	t.Helper()
	var out struct {
		Tags  []tagOut `json:"tags"`
		Total int      `json:"total"`
	}
	mustCall(t, env, "list_tags", map[string]any{}, &out)
	if out.Total != len(out.Tags) {
		t.Fatalf("list_tags: total %d for %d tags", out.Total, len(out.Tags))
	}
	for i := 1; i < len(out.Tags); i++ {
		if joplinops.NormalizeTitle(out.Tags[i-1].Title) > joplinops.NormalizeTitle(out.Tags[i].Title) {
			t.Fatalf("list_tags not sorted: %q before %q", out.Tags[i-1].Title, out.Tags[i].Title)
		}
	}
	return out.Tags
}

// countTags counts the tags whose title equals title ignoring case and
// surrounding whitespace, reading Joplin directly.
func countTags(t *testing.T, env Env, title string) int {
	t.Helper()
	all, err := joplin.ListAll[tagOut](context.Background(), env.Joplin, "/tags", url.Values{"fields": {"id,title"}}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tg := range all {
		if strings.EqualFold(strings.TrimSpace(tg.Title), strings.TrimSpace(title)) {
			n++
		}
	}
	return n
}

func tagLifecycle(t *testing.T, env Env) {
	title := unique(t, "Project X")
	var tg tagOut
	mustCall(t, env, "create_tag", map[string]any{"title": title}, &tg)
	if tg.ID == "" || tg.Title != title {
		t.Fatalf("create_tag: %+v", tg)
	}
	for _, variant := range []string{title, strings.ToUpper(title), "  " + strings.ReplaceAll(title, " ", "   ") + " "} {
		e := wantErr(t, env, "create_tag", map[string]any{"title": variant}, domainerr.TagAlreadyExists)
		if e.Retryable || e.Details["update_tool"] != "update_tag" || e.Details["restore_tool"] != nil ||
			!strings.Contains(fmt.Sprint(e.Details["matches"]), tg.ID) {
			t.Fatalf("variant %q: %+v", variant, e)
		}
	}
	if n := countTags(t, env, title); n != 1 {
		t.Fatalf("duplicate written: %d tags", n)
	}
	wantErr(t, env, "create_tag", map[string]any{"title": " \t "}, domainerr.InvalidArgument)

	found := false
	for _, x := range listTags(t, env) {
		found = found || (x.ID == tg.ID && x.Title == tg.Title)
	}
	if !found {
		t.Fatalf("list_tags lacks %s", tg.ID)
	}

	other := unique(t, "Other")
	var tg2 tagOut
	mustCall(t, env, "create_tag", map[string]any{"title": other}, &tg2)
	e := wantErr(t, env, "update_tag", map[string]any{"id": tg.ID, "title": strings.ToUpper(other)}, domainerr.TagAlreadyExists)
	if !strings.Contains(fmt.Sprint(e.Details["matches"]), tg2.ID) {
		t.Fatalf("rename onto another tag: %+v", e.Details)
	}
	var got tagOut
	if err := env.Joplin.Get(context.Background(), "/tags/"+tg.ID, url.Values{"fields": {"id,title"}}, &got); err != nil || got.Title != tg.Title {
		t.Fatalf("refused rename wrote %q (%v)", got.Title, err)
	}
	renamed := unique(t, "Renamed")
	mustCall(t, env, "update_tag", map[string]any{"id": tg.ID, "title": renamed}, &got)
	if got.ID != tg.ID || got.Title != renamed {
		t.Fatalf("update_tag: %+v", got)
	}
	// A new case of its own title is not a conflict.
	mustCall(t, env, "update_tag", map[string]any{"id": tg.ID, "title": strings.ToUpper(renamed)}, &got)
	wantErr(t, env, "update_tag", map[string]any{"id": joplin.NewID(), "title": "x"}, domainerr.NotFound)

	var del struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}
	mustCall(t, env, "delete_tag", map[string]any{"id": tg2.ID}, &del)
	if !del.Deleted || del.ID != tg2.ID || countTags(t, env, other) != 0 {
		t.Fatalf("delete_tag: %+v", del)
	}
	for _, x := range listTags(t, env) {
		if x.ID == tg2.ID {
			t.Fatal("list_tags shows a deleted tag")
		}
	}
	wantErr(t, env, "delete_tag", map[string]any{"id": tg2.ID}, domainerr.NotFound)
}

// noteTagIDs returns the ids of the tags a note has, reading Joplin directly.
func noteTagIDs(t *testing.T, env Env, noteID string) string {
	t.Helper()
	tags, err := joplin.ListAll[tagOut](context.Background(), env.Joplin, "/notes/"+noteID+"/tags", url.Values{"fields": {"id"}}, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(tags)
}

func tagNotes(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Tagged"), "")
	n := seedNote(t, env, nb, "to tag")
	var tg tagOut
	mustCall(t, env, "create_tag", map[string]any{"title": unique(t, "urgent")}, &tg)
	args := map[string]any{"note_id": n, "tag_id": tg.ID}

	var out map[string]any
	mustCall(t, env, "tag_note", args, &out)
	if out["already_tagged"] != false || out["note_id"] != n || out["tag_id"] != tg.ID {
		t.Fatalf("tag_note: %v", out)
	}
	if !strings.Contains(noteTagIDs(t, env, n), tg.ID) {
		t.Fatal("tag_note did not tag the note")
	}
	mustCall(t, env, "tag_note", args, &out)
	if out["already_tagged"] != true {
		t.Fatalf("second tag_note: %v", out)
	}

	for _, c := range []struct {
		args    map[string]any
		missing string
	}{
		{map[string]any{"note_id": joplin.NewID(), "tag_id": tg.ID}, "note"},
		{map[string]any{"note_id": n, "tag_id": joplin.NewID()}, "tag"},
	} {
		for _, op := range []string{"tag_note", "untag_note"} {
			e := wantErr(t, env, op, c.args, domainerr.NotFound)
			if e.Details["missing"] != c.missing {
				t.Fatalf("%s with unknown %s: %+v", op, c.missing, e.Details)
			}
		}
	}

	mustCall(t, env, "untag_note", args, &out)
	if out["already_untagged"] != false {
		t.Fatalf("untag_note: %v", out)
	}
	if strings.Contains(noteTagIDs(t, env, n), tg.ID) {
		t.Fatal("untag_note did not untag the note")
	}
	mustCall(t, env, "untag_note", args, &out)
	if out["already_untagged"] != true {
		t.Fatalf("second untag_note: %v", out)
	}

	// Deleting a tag keeps the notes it was on.
	mustCall(t, env, "tag_note", args, nil)
	mustCall(t, env, "delete_tag", map[string]any{"id": tg.ID}, nil)
	if strings.Contains(noteTagIDs(t, env, n), tg.ID) {
		t.Fatal("deleted tag still on the note")
	}
	mustCall(t, env, "get_note", map[string]any{"id": n}, nil)
}
