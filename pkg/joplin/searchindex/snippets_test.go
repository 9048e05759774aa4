package searchindex

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSnippetsAreSearchs holds that Snippets, one statement for many
// notes, quotes each note as Search does (snippet, matched attachment),
// for notes anywhere in the matches and for notes that do not match.
func TestSnippetsAreSearchs(t *testing.T) {
	ctx := context.Background()
	ix := openEmpty(t)
	var notes []Note
	for i := range 40 {
		n := Note{ID: fmt.Sprintf("n%02d", i), Title: fmt.Sprintf("Note %d", i), UpdatedTime: int64(i),
			Body: fmt.Sprintf("plumbing notes %d: the plumber came, plumbers quoted %d", i, i*7)}
		if i%3 == 0 {
			n.Body = "nothing of the kind"
			n.Attachments = []Attachment{{ID: fmt.Sprintf("%032d", i), UpdatedTime: 1, Text: "Invoice for plumbing work"}}
		}
		notes = append(notes, n)
	}
	if err := ix.PutNotes(ctx, notes); err != nil {
		t.Fatal(err)
	}
	for _, query := range []string{"plumb", "plumbing", `"the plumber"`, "any:1 invoice quoted", "title:note"} {
		q, _ := Parse(query, time.Now())
		hits, err := ix.Search(ctx, q, Options{Limit: 100})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%s: %v hits, %v", query, len(hits), err)
		}
		var rids []int64
		for i, h := range hits {
			if i%2 == 0 {
				rids = append(rids, h.RID)
			}
		}
		rids = append(rids, 1_000_000) // no such note
		got, err := ix.Snippets(ctx, q, rids)
		if err != nil || len(got) != (len(hits)+1)/2 {
			t.Fatalf("%s: %d snippets for %d notes, %v", query, len(got), len(rids)-1, err)
		}
		for i, h := range hits {
			g, ok := got[h.RID]
			if ok != (i%2 == 0) || (ok && (g.Snippet != h.Snippet || g.Attachment != h.Attachment || g.AttachmentSnippet != h.AttachmentSnippet)) {
				t.Fatalf("%s: %s: got %+v, Search quotes %+v", query, h.ID, g, h)
			}
		}
	}
}

// TestScopeLeavesOutTheTrash holds Scope without filters: nil (every
// note) while the trash is empty, the trashed notes left out once not.
func TestScopeLeavesOutTheTrash(t *testing.T) {
	ctx := context.Background()
	ix := openEmpty(t)
	must(t, ix.PutNotes(ctx, []Note{{ID: "n1", Title: "kept"}, {ID: "n2", Title: "binned"}}))
	q, _ := Parse("anything", time.Now())
	if keep, err := ix.Scope(ctx, q, Options{}); keep != nil || err != nil {
		t.Fatalf("an empty trash scopes %v, %v", keep != nil, err)
	}
	must(t, ix.PutNotes(ctx, []Note{{ID: "n2", Title: "binned", Deleted: 5}}))
	keep, err := ix.Scope(ctx, q, Options{})
	if err != nil || keep == nil {
		t.Fatalf("no scope: %v", err)
	}
	for id, want := range map[string]bool{"n1": true, "n2": false} {
		hits, err := ix.Search(ctx, Query{Filters: []Filter{{Name: "id", Value: id}}}, Options{Limit: 1, IncludeTrashed: true})
		if err != nil || len(hits) != 1 || keep(hits[0].RID) != want {
			t.Fatalf("%s kept: want %v; %+v %v", id, want, hits, err)
		}
	}
	var plan string
	var x1, x2 any
	must(t, ix.db.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT rid FROM notes WHERE deleted_time <> 0`).Scan(&x1, &x2, new(any), &plan))
	if !strings.Contains(plan, "notes_trashed") {
		t.Fatalf("the trash is read by %q", plan)
	}
}
