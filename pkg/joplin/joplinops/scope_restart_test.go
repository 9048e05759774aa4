package joplinops_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/identity"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// rawClient talks to the Joplin at url with neither guard nor view: what
// the person's own apps write, before notebridge first meets it.
func rawClient(t testing.TB, url, tf string) *joplin.Client {
	t.Helper()
	c, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rawCreate creates an object of kind ("folders", "notes", "tags")
// directly, under ctx.
func rawCreate(t testing.TB, c *joplin.Client, kind string, body map[string]any, ctx context.Context) string {
	t.Helper()
	var out struct{ ID string }
	if err := c.Write(ctx, "POST", "/"+kind, nil, body, &out); err != nil || out.ID == "" {
		t.Fatalf("seed %s: %v", kind, err)
	}
	return out.ID
}

// TestScopedFirstCallerAfterRestartLocksNobodyOut (issue 31, defect 1):
// the identity guard records and checks its anchors as notebridge itself.
// After a restart whose first caller, on any surface, is limited to a
// notebook newer than every anchor, that caller is served (no
// JOPLIN_CHANGED) and every other credential keeps working; after
// `joplin forget`, a scoped first caller records the whole Joplin's
// anchors, not its own share.
func TestScopedFirstCallerAfterRestartLocksNobodyOut(t *testing.T) {
	_, url, tf := joplinfake.Serve(t, token)
	raw := rawClient(t, url, tf)
	archive := rawCreate(t, raw, "folders", map[string]any{"title": "Archive"}, context.Background())
	oldNotes := []string{
		rawCreate(t, raw, "notes", map[string]any{"title": "old one", "parent_id": archive}, context.Background()),
		rawCreate(t, raw, "notes", map[string]any{"title": "old two", "parent_id": archive}, context.Background()),
	}
	state := t.TempDir()
	first := newScopedHarnessWith(t, url, tf, joplinindex.MeaningConfig{}, state)
	first.owner(t, "list_notebooks", nil, nil) // first contact records the identity
	if rec, err := identity.Load(filepath.Join(state, identity.FileName)); err != nil || len(rec.Anchors) == 0 {
		t.Fatalf("identity after first contact: %+v %v", rec, err)
	}
	newer := first.ownerID(t, "create_notebook", map[string]any{"title": "Newer"})
	first.ownerID(t, "create_note", map[string]any{"notebook_id": newer, "title": "new note"})

	onlyNewer := notebookscope.New(notebookscope.Only(newer), notebookscope.Only(newer))
	onlyArchive := notebookscope.New(notebookscope.Only("Archive"), notebookscope.Only())
	for k := range first.callers(t, onlyNewer) {
		h := newScopedHarnessWith(t, url, tf, joplinindex.MeaningConfig{}, state) // a restart
		who := h.callers(t, onlyNewer)[k]
		if _, derr := who.call("list_notes", map[string]any{}); derr != nil {
			t.Fatalf("first caller after a restart over %s, limited to Newer: %v", who.name, derr)
		}
		for _, other := range h.callers(t, onlyArchive) {
			if _, derr := other.call("list_notes", map[string]any{}); derr != nil {
				t.Errorf("after %s's first call, %s limited to Archive: %v", who.name, other.name, derr)
			}
		}
		h.owner(t, "list_notebooks", nil, nil)
	}

	if _, err := identity.Forget(state); err != nil {
		t.Fatal(err)
	}
	h := newScopedHarnessWith(t, url, tf, joplinindex.MeaningConfig{}, state)
	for _, who := range h.callers(t, onlyNewer) {
		if _, derr := who.call("list_notes", map[string]any{}); derr != nil {
			t.Fatalf("%s after forget: %v", who.name, derr)
		}
	}
	rec, err := identity.Load(filepath.Join(state, identity.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var anchored []string
	for _, a := range rec.Anchors {
		anchored = append(anchored, a.ID)
	}
	for _, id := range append([]string{archive}, oldNotes...) {
		if !slices.Contains(anchored, id) {
			t.Errorf("recorded again through a caller limited to Newer: anchors %v lack %s, outside its scope", anchored, id)
		}
	}
}
