package joplinops_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// BenchmarkContextToEditOneSection measures the context an agent spends
// (bytes of arguments and answers, as the model reads and writes them) to
// change one section of a 100 KB note: read the note, preview the
// set_section change, apply it. whole_body reads the note as get_note
// answered before issue 27 (view full); outline_section reads its outline,
// then the one section. docs/benchmarks.md has the figures.
func BenchmarkContextToEditOneSection(b *testing.B) {
	for _, c := range []struct {
		name  string
		reads []map[string]any
	}{
		{"whole_body", []map[string]any{{"view": "full"}}},
		{"default_get_note", []map[string]any{{}}},
		{"outline_section", []map[string]any{{"view": "outline"}, {"view": "section", "heading": "## Section 17"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := newHarness(b)
			nb := scenarios.Folder(b, h.env, "Long", "")
			body := scenarios.LongNote(100_000)
			id := scenarios.SeedNote(b, h.env, nb, "Report", body)
			ctx := context.Background()
			spent := 0
			call := func(name string, args map[string]any) json.RawMessage {
				raw, _ := json.Marshal(args)
				res, derr := h.env.Call(ctx, name, args)
				if derr != nil {
					b.Fatalf("%s: %v", name, derr)
				}
				spent += len(raw) + len(res)
				return res
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				// Every round edits the same 100 KB note (the reset is not
				// counted).
				b.StopTimer()
				if err := h.env.Joplin.Write(ctx, "PUT", "/notes/"+id, nil, map[string]any{"body": body}, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				spent = 0
				for _, r := range c.reads {
					args := map[string]any{"id": id}
					for k, v := range r {
						args[k] = v
					}
					call("get_note", args)
				}
				changes := []map[string]any{{"note": id, "op": "set_section", "heading": "## Section 17", "text": "Rewritten " + string(rune('a'+i%26)) + ".\n"}}
				var p struct {
					PlanDigest string `json:"plan_digest"`
				}
				json.Unmarshal(call("preview_note_changes", map[string]any{"changes": changes}), &p)
				call("apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest})
			}
			b.ReportMetric(float64(spent), "context-bytes/op")
			b.ReportMetric(float64(spent)/4, "approx-tokens/op")
		})
	}
}
