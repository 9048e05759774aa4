package joplinindex

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestCompletedSyncBringsTagLinks: a sync applies notes (which /events
// reports) and tag links (which it does not); when the sync generation
// moves, the next poll reads the tag links, so a synced note is found by
// its tag without waiting for the reconciliation pass. Conflict copies
// a sync makes stay out of the index, as Joplin's own search leaves them.
func TestCompletedSyncBringsTagLinks(t *testing.T) {
	e := newEnv(t)
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Inbox"})
	var gen atomic.Int64
	x := New(e.c, Config{Path: e.path, Poll: 5 * time.Millisecond, IdlePoll: 5 * time.Millisecond, Reconcile: time.Hour,
		SyncGeneration: func() (int64, bool) { return gen.Load(), true },
		Applied:        func(what string) { e.applied <- what }})
	t.Cleanup(func() { x.Close() })
	x.Start()
	e.wait(t, "built")

	// What a sync from the person's phone applies: a tagged note and a
	// tag link on a note that was already here.
	old := e.write(t, "POST", "/notes", map[string]any{"title": "old", "body": "lemon", "parent_id": f["id"]})
	e.wait(t, "events")
	n := e.write(t, "POST", "/notes", map[string]any{"title": "from phone", "body": "kiwi", "parent_id": f["id"]})
	tag := e.write(t, "POST", "/tags", map[string]any{"title": "groceries"})
	e.write(t, "POST", "/tags/"+tag["id"].(string)+"/notes", map[string]any{"id": n["id"]})
	e.write(t, "POST", "/tags/"+tag["id"].(string)+"/notes", map[string]any{"id": old["id"]})
	cp := e.write(t, "POST", "/notes", map[string]any{"title": "conflict copy", "body": "kiwi", "parent_id": f["id"]})
	e.write(t, "PUT", "/notes/"+cp["id"].(string), map[string]any{"is_conflict": 1, "conflict_original_id": n["id"]})
	e.wait(t, "events")
	if got := find(t, x, "tag:groceries"); got != "" {
		t.Fatalf("tag links seen before the sync completed: %q", got)
	}
	gen.Add(1)
	e.wait(t, "synced")
	if got := find(t, x, "tag:groceries"); got != "from phone,old" {
		t.Errorf("after the sync completed: tag:groceries = %q", got)
	}
	if got := find(t, x, "kiwi"); got != "from phone" {
		t.Errorf("kiwi = %q, want the note and not its conflict copy", got)
	}
}
