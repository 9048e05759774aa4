package joplinops_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// TestApplyRefusesANoteASyncChangedAfterThePreview: the person edits a
// note on the phone; a sync applies that edit to the bundled Joplin
// between the agent's preview and its apply. The apply's compare-and-swap
// refuses with PLAN_MISMATCH, writes nothing, and the synced text stays;
// a fresh preview then applies on top of it.
func TestApplyRefusesANoteASyncChangedAfterThePreview(t *testing.T) {
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	b := newProcBridge(t, srv.URL, t.TempDir())
	ids, changes := seedNotes(t, b.env(), 2)
	var p scenarios.Preview
	if derr := b.call(t, "preview_note_changes", map[string]any{"changes": changes}, &p); derr != nil {
		t.Fatal(derr)
	}
	// What Joplin's synchroniser does with a remote change: it saves the
	// note as the remote has it (new body, new updated_time).
	sync := httptest.NewRequest(http.MethodPut, "/notes/"+ids[1]+"?token="+token, strings.NewReader(`{"body":"from the phone\n"}`))
	rec := httptest.NewRecorder()
	fake.ServeHTTP(rec, sync)
	if rec.Code != http.StatusOK {
		t.Fatalf("sync-applied update: %d %s", rec.Code, rec.Body)
	}
	putsBefore := notePuts(fake)
	derr := b.call(t, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest}, nil)
	if derr == nil || derr.Code != domainerr.PlanMismatch {
		t.Fatalf("apply after a sync changed a note: %v, want PLAN_MISMATCH", derr)
	}
	if puts := notePuts(fake); puts[ids[0]] != putsBefore[ids[0]] || puts[ids[1]] != putsBefore[ids[1]] {
		t.Errorf("the refused apply wrote notes: %v, before %v", puts, putsBefore)
	}
	var n struct{ Body string }
	b.jc.Get(context.Background(), "/notes/"+ids[1], url.Values{"fields": {"body"}}, &n)
	if n.Body != "from the phone\n" {
		t.Fatalf("the synced edit was lost: %q", n.Body)
	}
	if derr := b.call(t, "preview_note_changes", map[string]any{"changes": changes}, &p); derr != nil {
		t.Fatal(derr)
	}
	if derr := b.call(t, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest}, nil); derr != nil {
		t.Fatalf("apply of a fresh preview: %v", derr)
	}
	b.jc.Get(context.Background(), "/notes/"+ids[1], url.Values{"fields": {"body"}}, &n)
	if !strings.HasPrefix(n.Body, "from the phone\n") || !strings.Contains(n.Body, "added") {
		t.Errorf("after the fresh apply: %q", n.Body)
	}
}
