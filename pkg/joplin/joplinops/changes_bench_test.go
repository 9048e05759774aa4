package joplinops_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// BenchmarkOneLineEdit100KB compares, interleaved in each iteration and
// against the fake Joplin over HTTP, a one-line edit of a 100 KB note made
// the old way (get_note, then update_note with the whole body) with
// preview_note_changes and apply_note_changes (the apply's preview is not
// timed). It reports the medians, the ratios to the old way (issue #17
// goal: each <= 1.3), and the request bytes an agent sends (goal: the apply
// at least 20x smaller than the full-body update).
//
//	go test ./pkg/joplin/joplinops -run '^$' -bench OneLineEdit100KB -benchtime 200x
func BenchmarkOneLineEdit100KB(b *testing.B) {
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	b.Cleanup(srv.Close)
	br := newProcBridge(b, srv.URL, b.TempDir())
	env := br.env()
	nb := scenarios.Folder(b, env, "Bench", "")
	body := scenarios.BigBody(100_000)
	id := scenarios.SeedNote(b, env, nb, "Log", body)
	const lineA, lineB = "- entry 00500: nothing to report on this line", "- entry 00500: the pump failed"
	ctx := context.Background()
	call := func(name string, args any) json.RawMessage {
		raw, _ := json.Marshal(args)
		res, derr := br.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, name, raw)
		if derr != nil {
			b.Fatalf("%s: %v", name, derr)
		}
		return res
	}
	var old, preview, apply []time.Duration
	var updateBytes, applyBytes int
	from, to := lineA, lineB
	for b.Loop() {
		// The old way: read the note, send the whole body back.
		start := time.Now()
		var n struct{ Body string }
		// view full: the default view cuts a body over 20,000 bytes.
		json.Unmarshal(call("get_note", map[string]any{"id": id, "view": "full"}), &n)
		upd := map[string]any{"id": id, "body": strings.Replace(n.Body, from, to, 1)}
		call("update_note", upd)
		old = append(old, time.Since(start))
		from, to = to, from

		changes := []scenarios.Change{{"note": id, "op": "replace", "find": from, "text": to}}
		start = time.Now()
		var p scenarios.Preview
		json.Unmarshal(call("preview_note_changes", map[string]any{"changes": changes}), &p)
		preview = append(preview, time.Since(start))
		args := map[string]any{"changes": changes, "plan_digest": p.PlanDigest}
		start = time.Now()
		call("apply_note_changes", args)
		apply = append(apply, time.Since(start))
		from, to = to, from

		u, _ := json.Marshal(upd)
		a, _ := json.Marshal(args)
		updateBytes, applyBytes = len(u), len(a)
	}
	o, p, a := median(old), median(preview), median(apply)
	b.ReportMetric(float64(o.Microseconds()), "get+update-µs")
	b.ReportMetric(float64(p.Microseconds()), "preview-µs")
	b.ReportMetric(float64(a.Microseconds()), "apply-µs")
	b.ReportMetric(float64(p)/float64(o), "preview-ratio")
	b.ReportMetric(float64(a)/float64(o), "apply-ratio")
	b.ReportMetric(float64(updateBytes), "update-req-B")
	b.ReportMetric(float64(applyBytes), "apply-req-B")
	b.ReportMetric(float64(updateBytes)/float64(applyBytes), "req-size-x")
}
