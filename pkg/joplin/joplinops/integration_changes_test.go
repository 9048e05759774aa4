//go:build integration

package joplinops_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// TestRealJoplinApplyInterruptedThenCompleted: real Joplin writes the third
// of five notes but its answer is lost, as when the bridge dies mid-apply.
// A new bridge process on the same state directory re-applies: the apply
// completes, Joplin saw exactly one PUT per note, and undo restores all.
func TestRealJoplinApplyInterruptedThenCompleted(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	state := t.TempDir()
	first := newProcBridgeToken(t, j.URL(), j.TokenFile, state)
	ids, changes := seedNotes(t, first.env(), 5)
	var p scenarios.Preview
	if derr := first.call(t, "preview_note_changes", map[string]any{"changes": changes}, &p); derr != nil || p.PlanDigest == "" {
		t.Fatalf("preview: %v %+v", derr, p)
	}
	var mu sync.Mutex
	puts := map[string]int{}
	j.Proxy.DropAfter(func(r *http.Request) bool {
		id, ok := strings.CutPrefix(r.URL.Path, "/notes/")
		if !ok || r.Method != http.MethodPut {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		puts[id]++
		return len(puts) == 3 && puts[id] == 1
	})
	args := map[string]any{"changes": changes, "plan_digest": p.PlanDigest}
	if derr := first.call(t, "apply_note_changes", args, nil); derr == nil || derr.Details["receipt_id"] != p.PlanDigest {
		t.Fatalf("interrupted apply: %v", derr)
	}
	if j.Proxy.Dropped() != 1 {
		t.Fatalf("dropped %d answers", j.Proxy.Dropped())
	}
	second := newProcBridgeToken(t, j.URL(), j.TokenFile, state)
	var a scenarios.Applied
	if derr := second.call(t, "apply_note_changes", args, &a); derr != nil || a.Status != "completed" || a.Written != 5 {
		t.Fatalf("re-apply: %v %+v", derr, a)
	}
	j.Proxy.DropAfter(nil)
	for _, id := range ids {
		var n struct{ Body string }
		second.jc.Get(context.Background(), "/notes/"+id, url.Values{"fields": {"body"}}, &n)
		if puts[id] != 1 || n.Body != "line\nadded" {
			t.Fatalf("note %s: %d PUTs, body %q", id, puts[id], n.Body)
		}
	}
	var u scenarios.Undone
	if derr := second.call(t, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID}, &u); derr != nil || u.Restored != 5 {
		t.Fatalf("undo: %v %+v", derr, u)
	}
}
