package searchindex

import (
	"context"
	"testing"
)

// TestChunksFollowTheText: a note's chunks are dropped when its text
// changes or it is removed (it is then "to be chunked"), chunks of a
// stale text are refused, and pruning removes only the vectors no chunk
// refers to.
func TestChunksFollowTheText(t *testing.T) {
	ix := openTest(t)
	ctx := context.Background()
	notes, err := ix.Unchunked(ctx, 100)
	if err != nil || len(notes) != 5 {
		t.Fatalf("unchunked %d %v, want the 5 seeded notes", len(notes), err)
	}
	var n1, n3 NoteText
	for _, n := range notes {
		h := [16]byte{byte(n.RID)}
		if ok, err := ix.PutChunks(ctx, n, []ChunkRow{{Seq: 0, Hash: h, End: len(n.Body)}}); !ok || err != nil {
			t.Fatalf("put chunks: %v %v", ok, err)
		}
		switch n.Title {
		case "Shopping list":
			n1 = n
		case "Groceries":
			n3 = n
		}
	}
	if _, err := ix.PutVectors(ctx, []Vector{{Hash: [16]byte{byte(n1.RID)}, Vec: []int8{1, 2}, Scale: 0.5}, {Hash: [16]byte{byte(n3.RID)}, Vec: []int8{5, 6}, Scale: 1}, {Hash: [16]byte{99}, Vec: []int8{3, 4}, Scale: 1}}); err != nil {
		t.Fatal(err)
	}
	if left, _ := ix.Unchunked(ctx, 100); len(left) != 0 {
		t.Fatalf("still unchunked: %v", left)
	}
	// The text changes: the note's chunks go; chunks cut from the old
	// text are refused.
	must(t, ix.PutNotes(ctx, []Note{{ID: "n1", ParentID: "fwork", Title: "Shopping list", Body: "tea"}}))
	if left, _ := ix.Unchunked(ctx, 100); len(left) != 1 || left[0].Body != "tea" {
		t.Fatalf("after the edit: %v", left)
	}
	if ok, _ := ix.PutChunks(ctx, n1, []ChunkRow{{Seq: 0, Hash: [16]byte{1}}}); ok {
		t.Error("chunks of the old text were stored")
	}
	var vecs int
	count := func() int {
		vecs = 0
		must(t, ix.NoteVectors(ctx, nil, func(int64, int, []int8, float32) { vecs++ }))
		return vecs
	}
	if count() != 1 {
		t.Errorf("%d vectors reached through chunks, want 1 (Groceries')", vecs)
	}
	must(t, ix.PruneVectors(ctx))
	var left int
	must(t, ix.db.QueryRow(`SELECT count(*) FROM embeddings`).Scan(&left))
	if left != 1 {
		t.Errorf("%d vectors left after pruning, want 1 (the one a chunk refers to)", left)
	}
	// Removing a note drops its chunks too.
	must(t, ix.DeleteNotes(ctx, []string{"n2"}))
	var chunks int
	must(t, ix.db.QueryRow(`SELECT count(*) FROM chunks`).Scan(&chunks))
	if chunks != 3 {
		t.Errorf("%d chunks after removing a note, want 3", chunks)
	}
}
