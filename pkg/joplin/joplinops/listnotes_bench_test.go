package joplinops_test

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkListNotesPage lists page 2 (100 notes, by title) of a 500-note
// notebook through the executor against the fake Joplin, and reports the
// Joplin requests each call costs.
func BenchmarkListNotesPage(b *testing.B) {
	h := newHarness(b)
	var nb struct {
		ID string `json:"id"`
	}
	if err := h.env.Joplin.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": "Big"}, &nb); err != nil {
		b.Fatal(err)
	}
	for i := range 500 {
		seedNote(b, h, nb.ID, fmt.Sprintf("n%03d", i))
	}
	args := map[string]any{"notebook_id": nb.ID, "order_by": "title", "order_dir": "asc", "limit": 100, "page": 2}
	before := len(h.fake.Requests())
	b.ResetTimer()
	for range b.N {
		if _, derr := h.env.Call(context.Background(), "list_notes", args); derr != nil {
			b.Fatal(derr)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(h.fake.Requests())-before)/float64(b.N), "joplin-requests/op")
}
