package joplinindex

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTagChangesAskJoplinLittle (issue 35): on a Joplin with 300 tags, a
// tag created and linked elsewhere, another renamed and the newest one
// deleted cost the next light check a handful of requests, not one per
// tag, and search sees all three changes. Before the fix the check read
// every tag's notes (300 requests and more).
func TestTagChangesAskJoplinLittle(t *testing.T) {
	e := newEnv(t)
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	var tags []string
	var notes []string
	for i := range 300 {
		tag := e.write(t, "POST", "/tags", map[string]any{"title": fmt.Sprintf("tag%03d", i)})
		n := e.write(t, "POST", "/notes", map[string]any{"title": fmt.Sprintf("n%03d", i), "body": "kiwi", "parent_id": f["id"]})
		e.write(t, "POST", "/tags/"+tag["id"].(string)+"/notes", map[string]any{"id": n["id"]})
		tags, notes = append(tags, tag["id"].(string)), append(notes, n["id"].(string))
	}
	start := func() *Indexer {
		x := New(e.c, Config{Path: e.path, Poll: time.Hour, Applied: func(what string) { e.applied <- what }})
		x.Start()
		return x
	}
	x := start()
	e.wait(t, "built")
	x.Close()
	for len(e.applied) > 0 {
		<-e.applied
	}

	// Elsewhere, while the bridge is down: a new tag on note 7, tag 10
	// renamed, the newest tag (299) deleted.
	fresh := e.write(t, "POST", "/tags", map[string]any{"title": "planning"})
	e.write(t, "POST", "/tags/"+fresh["id"].(string)+"/notes", map[string]any{"id": notes[7]})
	e.write(t, "PUT", "/tags/"+tags[10], map[string]any{"title": "renamed"})
	e.write(t, "DELETE", "/tags/"+tags[299], nil)

	before := len(e.fake.Requests())
	x = start()
	t.Cleanup(func() { x.Close() })
	e.wait(t, "resumed")
	e.wait(t, "checked")
	reqs := e.fake.Requests()[before:]
	var lines []string
	for _, r := range reqs {
		lines = append(lines, r.Method+" "+r.Path)
	}
	// /events, the two fingerprints, the tags newest first (it stops
	// short of the known ones only when the newest known survives: here
	// it was deleted, so the whole list: 300 tags are 3 pages and the
	// empty fourth that says there is no more), the notes of the new and
	// the renamed tag.
	if len(reqs) > 9 {
		t.Fatalf("the light check after three tag changes among 300 cost %d Joplin requests, want at most 9:\n%s", len(reqs), strings.Join(lines, "\n"))
	}
	for query, want := range map[string]string{"tag:planning": "n007", "tag:renamed": "n010", "tag:tag010": "", "tag:tag299": "", "tag:tag298": "n298"} {
		if got := find(t, x, query); got != want {
			t.Errorf("search %q: %q, want %q", query, got, want)
		}
	}
}

// TestTagCreatedAsksOnePage: a tag created and linked while the newest
// known tag stays costs the light check the fingerprints, one page of
// tags newest first and the new tag's notes.
func TestTagCreatedAsksOnePage(t *testing.T) {
	e := newEnv(t)
	f := e.write(t, "POST", "/folders", map[string]any{"title": "Work"})
	for i := range 250 {
		e.write(t, "POST", "/tags", map[string]any{"title": fmt.Sprintf("tag%03d", i)})
	}
	n := e.write(t, "POST", "/notes", map[string]any{"title": "target", "body": "kiwi", "parent_id": f["id"]})
	x := New(e.c, Config{Path: e.path, Poll: time.Hour, Applied: func(what string) { e.applied <- what }})
	x.Start()
	e.wait(t, "built")
	x.Close()
	for len(e.applied) > 0 {
		<-e.applied
	}
	fresh := e.write(t, "POST", "/tags", map[string]any{"title": "planning"})
	e.write(t, "POST", "/tags/"+fresh["id"].(string)+"/notes", map[string]any{"id": n["id"]})

	before := len(e.fake.Requests())
	x = New(e.c, Config{Path: e.path, Poll: time.Hour, Applied: func(what string) { e.applied <- what }})
	x.Start()
	t.Cleanup(func() { x.Close() })
	e.wait(t, "resumed")
	e.wait(t, "checked")
	reqs := e.fake.Requests()[before:]
	var lines []string
	for _, r := range reqs {
		lines = append(lines, r.Method+" "+r.Path)
	}
	if len(reqs) != 5 { // /events, 2 fingerprints, 1 page of tags, the new tag's notes
		t.Fatalf("a tag created among 250 cost the light check %d Joplin requests, want 5:\n%s", len(reqs), strings.Join(lines, "\n"))
	}
	if got := find(t, x, "tag:planning"); got != "target" {
		t.Errorf("search tag:planning: %q", got)
	}
}
