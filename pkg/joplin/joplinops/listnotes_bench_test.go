package joplinops_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
)

// BenchmarkListNotesPage lists page 2 (100 notes, by title) of a 500-note
// notebook through the executor against the fake Joplin, and reports the
// Joplin requests each call costs: as production runs it, and beside it
// with every answer checked against its output schema (as the tests run
// it; issue 35 measured that check as most of the bridge's CPU).
func BenchmarkListNotesPage(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts []executor.Option
	}{{"production", nil}, {"validating-outputs", []executor.Option{executor.WithOutputValidation()}}} {
		b.Run(mode.name, func(b *testing.B) { benchListNotesPage(b, mode.opts...) })
	}
}

func benchListNotesPage(b *testing.B, opts ...executor.Option) {
	h := newHarness(b, opts...)
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
