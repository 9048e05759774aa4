package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// ChangeScenarios covers preview_note_changes, apply_note_changes and
// undo_note_changes (issue #17).
func ChangeScenarios(t *testing.T, env Env) {
	t.Run("one_line_edit_100kb", func(t *testing.T) { oneLineEdit(t, env) })
	t.Run("race_with_external_edit", func(t *testing.T) { raceExternalEdit(t, env) })
	t.Run("move_and_retag_50", func(t *testing.T) { moveAndRetag(t, env) })
	t.Run("undo_after_external_edit", func(t *testing.T) { undoAfterExternalEdit(t, env) })
	t.Run("rejected_and_invalid", func(t *testing.T) { rejectedPlans(t, env) })
}

// Preview is preview_note_changes' result.
type Preview struct {
	Status     string `json:"status"`
	PlanDigest string `json:"plan_digest"`
	Notes      []struct {
		ID          string `json:"id"`
		UpdatedTime int64  `json:"updated_time"`
		Diff        string `json:"diff"`
		Cut         int    `json:"cut"`
	} `json:"notes"`
	Problems []string `json:"problems"`
}

// Applied is apply_note_changes' result.
type Applied struct {
	Status    string `json:"status"`
	ReceiptID string `json:"receipt_id"`
	Written   int    `json:"written"`
}

// Undone is undo_note_changes' result.
type Undone struct {
	Status    string   `json:"status"`
	ReceiptID string   `json:"receipt_id"`
	Restored  int      `json:"restored"`
	Skipped   []string `json:"skipped"`
}

// Change is one item of a plan request.
type Change map[string]any

// SeedNote creates a note directly in Joplin and returns its id.
func SeedNote(t testing.TB, env Env, notebook, title, body string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	if err := env.Joplin.Write(context.Background(), "POST", "/notes", nil, map[string]any{"parent_id": notebook, "title": title, "body": body}, &out); err != nil {
		t.Fatalf("seed note: %v", err)
	}
	return out.ID
}

// BigBody is a Markdown body of about size bytes, one numbered line each.
func BigBody(size int) string {
	var b strings.Builder
	b.WriteString("# Log\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "- entry %05d: nothing to report on this line\n", i)
	}
	return b.String()
}

// PreviewAndApply previews changes, checks the plan is applicable, and
// applies it.
func PreviewAndApply(t *testing.T, env Env, changes []Change) (Preview, Applied) {
	t.Helper()
	var p Preview
	mustCall(t, env, "preview_note_changes", map[string]any{"changes": changes}, &p)
	if p.Status != "applicable" || p.PlanDigest == "" {
		t.Fatalf("preview: %+v", p)
	}
	var a Applied
	mustCall(t, env, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest}, &a)
	return p, a
}

type storedNote struct {
	ParentID    string `json:"parent_id"`
	Title       string `json:"title"`
	Body        string `json:"body"`
	UpdatedTime int64  `json:"updated_time"`
}

func readNote(t *testing.T, env Env, id string) storedNote {
	t.Helper()
	var n storedNote
	if err := env.Joplin.Get(context.Background(), "/notes/"+id, url.Values{"fields": {"parent_id,title,body,updated_time"}}, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func sortedTagIDs(t *testing.T, env Env, id string) []string {
	t.Helper()
	tags, err := joplin.ListAll[struct {
		ID string `json:"id"`
	}](context.Background(), env.Joplin, "/notes/"+id+"/tags", url.Values{"fields": {"id"}}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range tags {
		out = append(out, x.ID)
	}
	slices.Sort(out)
	return out
}

func externalEdit(t *testing.T, env Env, id string, props map[string]any) {
	t.Helper()
	if err := env.Joplin.Write(context.Background(), "PUT", "/notes/"+id, nil, props, nil); err != nil {
		t.Fatal(err)
	}
}

// oneLineEdit changes one line of a 100 KB note, sends a request at least
// 20 times smaller than the full-body update, replays the identical apply
// without writing, and undoes the edit.
func oneLineEdit(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Big"), "")
	body := BigBody(100_000)
	id := SeedNote(t, env, nb, "Log", body)
	changes := []Change{{"note": id, "op": "replace", "find": "- entry 00500: nothing to report on this line", "text": "- entry 00500: the pump failed"}}
	p, a := PreviewAndApply(t, env, changes)
	if len(p.Notes) != 1 || p.Notes[0].Cut != 0 || !strings.Contains(p.Notes[0].Diff, "+- entry 00500: the pump failed") || len(p.Notes[0].Diff) > 1000 {
		t.Fatalf("preview notes: %+v", p.Notes)
	}
	if a.Status != "applied" || a.Written != 1 || a.ReceiptID == "" {
		t.Fatalf("apply: %+v", a)
	}
	want := strings.Replace(body, "entry 00500: nothing to report on this line", "entry 00500: the pump failed", 1)
	after := readNote(t, env, id)
	if after.Body != want {
		t.Fatal("body after apply is not the previewed one")
	}
	req, _ := json.Marshal(map[string]any{"changes": changes, "plan_digest": p.PlanDigest})
	full, _ := json.Marshal(map[string]any{"id": id, "body": want})
	if len(full) < 20*len(req) {
		t.Fatalf("request %d B is not 20x smaller than the full update %d B", len(req), len(full))
	}
	var again Applied
	mustCall(t, env, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest}, &again)
	if again.Status != "replayed" || again.ReceiptID != a.ReceiptID || readNote(t, env, id).UpdatedTime != after.UpdatedTime {
		t.Fatalf("re-apply: %+v", again)
	}
	other := []Change{{"note": id, "op": "append", "text": "other changes"}}
	wantErr(t, env, "apply_note_changes", map[string]any{"changes": other, "plan_digest": p.PlanDigest}, domainerr.ReceiptConflict)
	var u Undone
	mustCall(t, env, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID}, &u)
	if u.Status != "undone" || u.Restored != 1 || len(u.Skipped) != 0 || readNote(t, env, id).Body != body {
		t.Fatalf("undo: %+v", u)
	}
	var u2 Undone
	mustCall(t, env, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID}, &u2)
	if u2.Status != "replayed" || u2.ReceiptID != u.ReceiptID {
		t.Fatalf("second undo: %+v", u2)
	}
}

// raceExternalEdit edits the note straight through Joplin between preview
// and apply: the apply is PLAN_MISMATCH naming the note, and the external
// edit survives.
func raceExternalEdit(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Race"), "")
	id := SeedNote(t, env, nb, "Plan", "# Plan\n\nstep one\nstep two\n")
	changes := []Change{{"note": id, "op": "replace", "find": "step one", "text": "step 1"}}
	var p Preview
	mustCall(t, env, "preview_note_changes", map[string]any{"changes": changes}, &p)
	externalEdit(t, env, id, map[string]any{"body": "# Plan\n\nstep one\nstep two\nstep three (from the app)\n"})
	e := wantErr(t, env, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest}, domainerr.PlanMismatch)
	if !strings.Contains(fmt.Sprint(e.Details["moved"], e.Details["notes"]), id) {
		t.Fatalf("mismatch does not name the note: %+v", e.Details)
	}
	if got := readNote(t, env, id).Body; got != "# Plan\n\nstep one\nstep two\nstep three (from the app)\n" {
		t.Fatalf("external edit lost: %q", got)
	}
}

// moveAndRetag moves 50 notes to another notebook, swapping one tag for
// another, in one plan, then undoes it.
func moveAndRetag(t *testing.T, env Env) {
	ctx := context.Background()
	from := Folder(t, env, unique(t, "From"), "")
	to := Folder(t, env, unique(t, "To"), "")
	var oldTag, newTag struct {
		ID string `json:"id"`
	}
	if err := env.Joplin.Write(ctx, "POST", "/tags", nil, map[string]any{"title": unique(t, "old")}, &oldTag); err != nil {
		t.Fatal(err)
	}
	if err := env.Joplin.Write(ctx, "POST", "/tags", nil, map[string]any{"title": unique(t, "new")}, &newTag); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var changes []Change
	for i := 0; i < 50; i++ {
		id := SeedNote(t, env, from, fmt.Sprintf("note %d", i), "text")
		if err := env.Joplin.Write(ctx, "POST", "/tags/"+oldTag.ID+"/notes", nil, map[string]any{"id": id}, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		changes = append(changes, Change{"note": id, "op": "move", "target": to},
			Change{"note": id, "op": "tag", "target": newTag.ID}, Change{"note": id, "op": "untag", "target": oldTag.ID})
	}
	p, a := PreviewAndApply(t, env, changes)
	if len(p.Notes) != 50 || !strings.Contains(p.Notes[0].Diff, "notebook: "+from+" -> "+to) || !strings.Contains(p.Notes[0].Diff, "tag: +"+newTag.ID) {
		t.Fatalf("preview: %d notes, first %+v", len(p.Notes), p.Notes[0])
	}
	if a.Status != "applied" || a.Written != 50 {
		t.Fatalf("apply: %+v", a)
	}
	for _, id := range ids {
		if n := readNote(t, env, id); n.ParentID != to || !slices.Equal(sortedTagIDs(t, env, id), []string{newTag.ID}) {
			t.Fatalf("note %s after apply: %s %v", id, n.ParentID, sortedTagIDs(t, env, id))
		}
	}
	var u Undone
	mustCall(t, env, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID}, &u)
	if u.Restored != 50 {
		t.Fatalf("undo: %+v", u)
	}
	for _, id := range ids {
		if n := readNote(t, env, id); n.ParentID != from || !slices.Equal(sortedTagIDs(t, env, id), []string{oldTag.ID}) {
			t.Fatalf("note %s after undo: %s %v", id, n.ParentID, sortedTagIDs(t, env, id))
		}
	}
}

// undoAfterExternalEdit: a note edited after the apply is a conflict; undo
// restores nothing and lists it, unless restore_rest, which restores the
// other notes and leaves the edited one alone.
func undoAfterExternalEdit(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Undo"), "")
	a1 := SeedNote(t, env, nb, "A", "alpha\n")
	b1 := SeedNote(t, env, nb, "B", "beta\n")
	_, a := PreviewAndApply(t, env, []Change{
		{"note": a1, "op": "append", "text": "more alpha"}, {"note": b1, "op": "title", "text": "B renamed"},
	})
	externalEdit(t, env, b1, map[string]any{"title": "B edited in the app"})
	e := wantErr(t, env, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID}, domainerr.UndoConflict)
	if !strings.Contains(fmt.Sprint(e.Details["conflicts"]), b1) || strings.Contains(fmt.Sprint(e.Details["conflicts"]), a1) {
		t.Fatalf("conflicts: %+v", e.Details)
	}
	if readNote(t, env, a1).Body != "alpha\nmore alpha" {
		t.Fatal("a refused undo restored a note")
	}
	var u Undone
	mustCall(t, env, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID, "restore_rest": true}, &u)
	if u.Restored != 1 || !slices.Equal(u.Skipped, []string{b1}) {
		t.Fatalf("undo restore_rest: %+v", u)
	}
	if readNote(t, env, a1).Body != "alpha\n" || readNote(t, env, b1).Title != "B edited in the app" {
		t.Fatal("restore_rest restored the wrong notes")
	}
}

// rejectedPlans: changes that cannot apply make the plan rejected, every
// problem listed, no digest; malformed changes are INVALID_ARGUMENT.
func rejectedPlans(t *testing.T, env Env) {
	ctx := context.Background()
	nb := Folder(t, env, unique(t, "Reject"), "")
	gone := Folder(t, env, unique(t, "Gone"), "")
	if err := env.Joplin.Write(ctx, "DELETE", "/folders/"+gone, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	id := SeedNote(t, env, nb, "N", "# A\nx x\n# A\n```\n# B\n```\n")
	var p Preview
	mustCall(t, env, "preview_note_changes", map[string]any{"changes": []Change{
		{"note": id, "op": "replace", "find": "x", "text": "y"},
		{"note": id, "op": "replace", "find": "zzz", "text": "y"},
		{"note": id, "op": "delete_section", "heading": "A"},
		{"note": id, "op": "insert_after", "heading": "B", "text": "y"},
		{"note": id, "op": "move", "target": joplin.NewID()},
		{"note": id, "op": "move", "target": gone},
		{"note": joplin.NewID(), "op": "append", "text": "y"},
	}}, &p)
	if p.Status != "rejected" || p.PlanDigest != "" || len(p.Problems) != 7 || len(p.Notes) != 0 {
		t.Fatalf("rejected plan: %+v", p)
	}
	var noop Preview
	mustCall(t, env, "preview_note_changes", map[string]any{"changes": []Change{{"note": id, "op": "replace", "find": "x x", "text": "x x"}}}, &noop)
	if noop.Status != "noop" || noop.PlanDigest != "" {
		t.Fatalf("noop plan: %+v", noop)
	}
	e := wantErr(t, env, "preview_note_changes", map[string]any{"changes": []Change{
		{"note": "nope", "op": "append", "text": "y"},
		{"note": id, "op": "replace", "text": "y"},
		{"note": id, "op": "title", "text": "t", "heading": "h"},
	}}, domainerr.InvalidArgument)
	var probs []struct{ Path, Reason string }
	raw, _ := json.Marshal(e.Details["problems"])
	if json.Unmarshal(raw, &probs); len(probs) != 3 || probs[1].Path != "/changes/1/find" {
		t.Fatalf("problems: %+v", e.Details)
	}
	wantErr(t, env, "apply_note_changes", map[string]any{"changes": []Change{{"note": id, "op": "append", "text": "y"}}, "plan_digest": strings.Repeat("0", 64)}, domainerr.PlanMismatch)
	wantErr(t, env, "undo_note_changes", map[string]any{"receipt_id": strings.Repeat("0", 64)}, domainerr.NotFound)
	wantErr(t, env, "undo_note_changes", map[string]any{"receipt_id": "../x"}, domainerr.InvalidArgument)
	if readNote(t, env, id).Body != "# A\nx x\n# A\n```\n# B\n```\n" {
		t.Fatal("a rejected or invalid plan wrote")
	}
}
