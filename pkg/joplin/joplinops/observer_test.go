package joplinops_test

import (
	"context"
	"slices"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

// TestEveryWriteOperationNotifies runs every Joplin operation that is not a
// read, as the registry lists them, and checks that the client's observers
// (the search index, the sync request) were told of each write it made,
// with what it changed. A new write operation without a step here fails.
func TestEveryWriteOperationNotifies(t *testing.T) {
	h := newHarness(t)
	var seen []joplin.Write
	h.env.Joplin.Observe(func(_ context.Context, w joplin.Write) { seen = append(seen, w) })
	ids := map[string]string{}
	id := func(name string) string { return ids[name] }
	steps := []struct {
		op   string
		args func() map[string]any
		save string // the result id to keep under this name
		want joplin.Kind
	}{
		{"create_notebook", func() map[string]any { return map[string]any{"title": "Work"} }, "notebook", joplin.NotebookSaved},
		{"update_notebook", func() map[string]any { return map[string]any{"id": id("notebook"), "title": "Office"} }, "", joplin.NotebookSaved},
		{"create_note", func() map[string]any { return map[string]any{"notebook_id": id("notebook"), "title": "Plan"} }, "note", joplin.NoteSaved},
		{"update_note", func() map[string]any { return map[string]any{"id": id("note"), "body": "first draft"} }, "", joplin.NoteSaved},
		{"create_tag", func() map[string]any { return map[string]any{"title": "urgent"} }, "tag", joplin.TagSaved},
		{"update_tag", func() map[string]any { return map[string]any{"id": id("tag"), "title": "later"} }, "", joplin.TagSaved},
		{"tag_note", func() map[string]any { return map[string]any{"note_id": id("note"), "tag_id": id("tag")} }, "", joplin.TagLinked},
		{"untag_note", func() map[string]any { return map[string]any{"note_id": id("note"), "tag_id": id("tag")} }, "", joplin.TagUnlinked},
		{"edit_note", func() map[string]any { return editArgs(t, h, id("note")) }, "", joplin.NoteSaved},
		{"apply_note_changes", func() map[string]any { return previewChanges(t, h, id("note")) }, "receipt", joplin.NoteSaved},
		{"undo_note_changes", func() map[string]any { return map[string]any{"receipt_id": id("receipt")} }, "", joplin.NoteSaved},
		{"create_resource", func() map[string]any { return map[string]any{"data_base64": "aGVsbG8=", "filename": "a.txt"} }, "resource", joplin.ResourceSaved},
		{"update_resource", func() map[string]any { return map[string]any{"id": id("resource"), "title": "greeting"} }, "", joplin.ResourceSaved},
		{"delete_resource", func() map[string]any { return map[string]any{"id": id("resource")} }, "", joplin.ResourceDeleted},
		{"trash_note", func() map[string]any { return map[string]any{"id": id("note")} }, "", joplin.NoteTrashed},
		{"restore_note", func() map[string]any { return map[string]any{"id": id("note")} }, "", joplin.NoteSaved},
		{"delete_tag", func() map[string]any { return map[string]any{"id": id("tag")} }, "", joplin.TagDeleted},
		{"trash_notebook", func() map[string]any { return map[string]any{"id": id("notebook")} }, "", joplin.NotebookTrashed},
		{"restore_notebook", func() map[string]any { return map[string]any{"id": id("notebook")} }, "", joplin.NotebookSaved},
	}
	covered := map[string]bool{}
	for _, s := range steps {
		covered[s.op] = true
		before := len(seen)
		var out struct {
			ID        string `json:"id"`
			ReceiptID string `json:"receipt_id"`
		}
		call(t, h, s.op, s.args(), &out)
		if s.save != "" {
			ids[s.save] = out.ID + out.ReceiptID
		}
		got := seen[before:]
		kinds := make([]joplin.Kind, len(got))
		for i, w := range got {
			kinds[i] = w.Kind
		}
		if !slices.Contains(kinds, s.want) || slices.Contains(kinds, "") {
			t.Errorf("%s: observers were told %v, want %s among them and every write classified", s.op, kinds, s.want)
		}
	}
	for _, op := range joplinops.Operations(h.env.Joplin, joplinops.DefaultLimits) {
		if op.Effect != registry.EffectRead && !covered[op.Name] {
			t.Errorf("write operation %s has no step in this test: add one", op.Name)
		}
	}
}

// previewChanges previews an append to note and returns the arguments
// that apply it.
func previewChanges(t *testing.T, h *harness, note string) map[string]any {
	t.Helper()
	changes := []map[string]any{{"note": note, "op": "append", "text": "more"}}
	var p struct {
		PlanDigest string `json:"plan_digest"`
	}
	call(t, h, "preview_note_changes", map[string]any{"changes": changes}, &p)
	return map[string]any{"changes": changes, "plan_digest": p.PlanDigest}
}

// editArgs reads note and returns edit_note arguments appending to it.
func editArgs(t *testing.T, h *harness, note string) map[string]any {
	t.Helper()
	var n struct {
		UpdatedTime int64 `json:"updated_time"`
	}
	call(t, h, "get_note", map[string]any{"id": note}, &n)
	return map[string]any{"id": note, "updated_time": n.UpdatedTime, "changes": []map[string]any{{"op": "append", "text": "edited"}}}
}
