package joplinops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

// procBridge is one bridge process: an executor over the Joplin at url with
// receipts in state.
type procBridge struct {
	jc *joplin.Client
	ex *executor.Executor
}

func newProcBridge(t testing.TB, url, state string) procBridge {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token), 0o600)
	return newProcBridgeToken(t, url, tokenFile, state)
}

func newProcBridgeToken(t testing.TB, url, tokenFile, state string) procBridge {
	t.Helper()
	jc, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tokenFile, AvailabilityWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(joplinops.Operations(jc, joplinops.DefaultLimits,
		joplinops.WithCreateLockDir(state), joplinops.WithReceiptDir(state, receipts.DefaultLimits))...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
	if err != nil {
		t.Fatal(err)
	}
	return procBridge{jc: jc, ex: ex}
}

func (b procBridge) env() scenarios.Env {
	return scenarios.Env{Joplin: b.jc, Call: func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error) {
		raw, _ := json.Marshal(args)
		return b.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, name, raw)
	}}
}

func (b procBridge) call(t *testing.T, name string, args, out any) *domainerr.Error {
	t.Helper()
	res, derr := b.env().Call(context.Background(), name, args)
	if derr == nil && out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatal(err)
		}
	}
	return derr
}

// notePuts counts, per note id, the PUTs the fake Joplin served.
func notePuts(fake *joplinfake.Server) map[string]int {
	out := map[string]int{}
	for _, r := range fake.Requests() {
		if id, ok := strings.CutPrefix(r.Path, "/notes/"); ok && r.Method == http.MethodPut {
			out[id]++
		}
	}
	return out
}

// faultAt wraps fake: the nth PUT to a note gets fault (which may serve it
// or not); every request before and after passes.
func faultAt(fake http.Handler, n int, fault func(w http.ResponseWriter, r *http.Request)) http.Handler {
	var mu sync.Mutex
	puts := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/notes/") {
			puts++
			if puts == n {
				mu.Unlock()
				fault(w, r)
				return
			}
		}
		mu.Unlock()
		fake.ServeHTTP(w, r)
	})
}

func seedNotes(t *testing.T, env scenarios.Env, n int) (ids []string, changes []scenarios.Change) {
	t.Helper()
	nb := scenarios.Folder(t, env, "Crash", "")
	for i := 0; i < n; i++ {
		id := scenarios.SeedNote(t, env, nb, fmt.Sprintf("n%d", i), "line\n")
		ids = append(ids, id)
		changes = append(changes, scenarios.Change{"note": id, "op": "append", "text": "added"})
	}
	return ids, changes
}

// TestApplyInterruptedPartWayCompletesWithoutRewriting: the bridge dies
// part-way through a 5-note apply. In one case Joplin wrote the third note
// but its answer never came back (the receipt does not mark it); in the
// other, the fourth write never reached Joplin. A new bridge process on the
// same state directory re-applies: the receipt is completed, and every note
// was written by Joplin exactly once.
func TestApplyInterruptedPartWayCompletesWithoutRewriting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nth     int
		served  bool
		written int
	}{
		{"written_but_unanswered", 3, true, 2},
		{"never_sent", 4, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := joplinfake.New(token)
			state := t.TempDir()
			// One Joplin endpoint: its answers fail once, then it is healthy.
			var crashed atomic.Bool
			faulty := faultAt(fake, tc.nth, func(w http.ResponseWriter, r *http.Request) {
				if tc.served {
					fake.ServeHTTP(httptest.NewRecorder(), r)
				}
				// The process "dies": the connection closes without an answer.
				crashed.Store(true)
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					conn.Close()
				}
			})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if crashed.Load() {
					fake.ServeHTTP(w, r)
					return
				}
				faulty.ServeHTTP(w, r)
			}))
			defer srv.Close()
			first := newProcBridge(t, srv.URL, state)
			ids, changes := seedNotes(t, first.env(), 5)
			var p scenarios.Preview
			if derr := first.call(t, "preview_note_changes", map[string]any{"changes": changes}, &p); derr != nil || p.PlanDigest == "" {
				t.Fatalf("preview: %v %+v", derr, p)
			}
			args := map[string]any{"changes": changes, "plan_digest": p.PlanDigest}
			derr := first.call(t, "apply_note_changes", args, nil)
			if derr == nil || derr.Details["receipt_id"] != p.PlanDigest {
				t.Fatalf("interrupted apply: %v", derr)
			}
			if w := fmt.Sprint(derr.Details["written"]); strings.Count(w, " ")+1 != tc.written {
				t.Fatalf("written before the interruption: %s", w)
			}

			second := newProcBridge(t, srv.URL, state)
			var a scenarios.Applied
			if derr := second.call(t, "apply_note_changes", args, &a); derr != nil || a.Status != "completed" || a.Written != 5 {
				t.Fatalf("re-apply: %v %+v", derr, a)
			}
			puts := notePuts(fake)
			for _, id := range ids {
				if puts[id] != 1 {
					t.Fatalf("note %s written %d times", id, puts[id])
				}
				var n struct{ Body string }
				second.jc.Get(context.Background(), "/notes/"+id, url.Values{"fields": {"body"}}, &n)
				if n.Body != "line\nadded" {
					t.Fatalf("note %s: %q", id, n.Body)
				}
			}
			if derr := second.call(t, "apply_note_changes", args, &a); derr != nil || a.Status != "replayed" {
				t.Fatalf("third apply: %v %+v", derr, a)
			}
			var u scenarios.Undone
			if derr := second.call(t, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID}, &u); derr != nil || u.Restored != 5 {
				t.Fatalf("undo: %v %+v", derr, u)
			}
		})
	}
}

// TestApplyRereadsEachNoteRightBeforeItsWrite: an edit made in Joplin to
// the third note while the apply is writing the first (after the plan was
// rebuilt and matched) stops the apply before the third note's write: the
// external edit survives, the receipt names the notes written, and undo
// restores them.
func TestApplyRereadsEachNoteRightBeforeItsWrite(t *testing.T) {
	fake := joplinfake.New(token)
	var ids []string
	srv := httptest.NewServer(faultAt(fake, 1, func(w http.ResponseWriter, r *http.Request) {
		fake.ServeHTTP(w, r)
		ext := httptest.NewRequest(http.MethodPut, "/notes/"+ids[2]+"?token="+token, strings.NewReader(`{"body":"from the app"}`))
		fake.ServeHTTP(httptest.NewRecorder(), ext)
	}))
	defer srv.Close()
	b := newProcBridge(t, srv.URL, t.TempDir())
	var changes []scenarios.Change
	ids, changes = seedNotes(t, b.env(), 4)
	var p scenarios.Preview
	b.call(t, "preview_note_changes", map[string]any{"changes": changes}, &p)
	derr := b.call(t, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest}, nil)
	if derr == nil || derr.Code != domainerr.PlanMismatch || derr.Details["note_id"] != ids[2] || fmt.Sprint(derr.Details["written"]) != fmt.Sprint(ids[:2]) {
		t.Fatalf("want PLAN_MISMATCH at the third note, got %v %+v", derr, derr.Details)
	}
	var n struct{ Body string }
	b.jc.Get(context.Background(), "/notes/"+ids[2], url.Values{"fields": {"body"}}, &n)
	if n.Body != "from the app" || notePuts(fake)[ids[3]] != 0 {
		t.Fatalf("external edit lost (%q) or a later note written", n.Body)
	}
	var u scenarios.Undone
	if derr := b.call(t, "undo_note_changes", map[string]any{"receipt_id": p.PlanDigest, "restore_rest": true}, &u); derr != nil || u.Restored != 2 {
		t.Fatalf("undo: %v %+v", derr, u)
	}
}

// TestReceiptsAreKeptPrivate: the receipt directory is 0700 and its files
// 0600, under the state directory.
func TestReceiptsArePrivate(t *testing.T) {
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	state := t.TempDir()
	b := newProcBridge(t, srv.URL, state)
	_, changes := seedNotes(t, b.env(), 1)
	var p scenarios.Preview
	b.call(t, "preview_note_changes", map[string]any{"changes": changes}, &p)
	if derr := b.call(t, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest}, nil); derr != nil {
		t.Fatal(derr)
	}
	dir := joplinops.ReceiptDir(state, b.jc.Endpoint())
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2 {
		t.Fatalf("receipt files: %v %v", entries, err)
	}
	for _, p := range []string{dir, filepath.Join(dir, entries[0].Name()), filepath.Join(dir, entries[1].Name())} {
		if st, _ := os.Stat(p); st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v", p, st.Mode())
		}
	}
}

// TestPlanBoundsAndUndoOfUndo: a plan over 101 notes is INVALID_ARGUMENT; a
// preview of 100 rewritten notes keeps its diffs within the bound and
// counts what it cut; an undo is a receipt that can itself be undone.
func TestPlanBoundsAndUndoOfUndo(t *testing.T) {
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	b := newProcBridge(t, srv.URL, t.TempDir())
	nb := scenarios.Folder(t, b.env(), "Bounds", "")
	var changes []scenarios.Change
	var ids []string
	for i := 0; i < 101; i++ {
		id := scenarios.SeedNote(t, b.env(), nb, fmt.Sprintf("n%d", i), strings.Repeat(fmt.Sprintf("old line %d\n", i), 200))
		ids = append(ids, id)
		changes = append(changes, scenarios.Change{"note": id, "op": "replace", "find": "old", "text": "new", "count": 200})
	}
	derr := b.call(t, "preview_note_changes", map[string]any{"changes": changes}, nil)
	if derr == nil || derr.Code != domainerr.InvalidArgument || !strings.Contains(fmt.Sprint(derr.Details), "at most 100") {
		t.Fatalf("101 notes: %v", derr)
	}
	var p scenarios.Preview
	if derr := b.call(t, "preview_note_changes", map[string]any{"changes": changes[:100]}, &p); derr != nil || len(p.Notes) != 100 {
		t.Fatalf("100 notes: %v", derr)
	}
	total, cut := 0, 0
	for _, n := range p.Notes {
		total += len(n.Diff)
		cut += n.Cut
	}
	if total > 60_000 || cut == 0 {
		t.Fatalf("diffs: %d bytes, %d lines cut", total, cut)
	}
	one := changes[:1]
	var a scenarios.Applied
	_, a = scenarios.PreviewAndApply(t, b.env(), one)
	var u, uu scenarios.Undone
	if derr := b.call(t, "undo_note_changes", map[string]any{"receipt_id": a.ReceiptID}, &u); derr != nil || u.Restored != 1 {
		t.Fatalf("undo: %v %+v", derr, u)
	}
	if derr := b.call(t, "undo_note_changes", map[string]any{"receipt_id": u.ReceiptID}, &uu); derr != nil || uu.Restored != 1 {
		t.Fatalf("undo of the undo: %v %+v", derr, uu)
	}
	var n struct{ Body string }
	b.jc.Get(context.Background(), "/notes/"+ids[0], url.Values{"fields": {"body"}}, &n)
	if !strings.HasPrefix(n.Body, "new line 0") {
		t.Fatalf("after undoing the undo: %q", n.Body[:20])
	}
}

// TestApplyOfABlockedPlanWithoutDigest: changes that cannot apply (their
// find text is missing) have no plan digest; applying them with an empty
// plan_digest is PLAN_MISMATCH naming the problem, and nothing is written
// (it was INTERNAL: the empty digest reached the receipt store as its id).
func TestApplyOfABlockedPlanWithoutDigest(t *testing.T) {
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	b := newProcBridge(t, srv.URL, t.TempDir())
	nb := scenarios.Folder(t, b.env(), "Blocked", "")
	id := scenarios.SeedNote(t, b.env(), nb, "Log", "one line\n")
	changes := []scenarios.Change{{"note": id, "op": "replace", "find": "no such line", "text": "x"}}
	derr := b.call(t, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": ""}, nil)
	if derr == nil || derr.Code != domainerr.PlanMismatch || !strings.Contains(fmt.Sprint(derr.Details["problems"]), "find has no match") {
		t.Fatalf("apply of a blocked plan with an empty digest: %v", derr)
	}
	var n struct{ Body string }
	if derr := b.call(t, "get_note", map[string]any{"id": id}, &n); derr != nil || n.Body != "one line\n" {
		t.Fatalf("the note after the refused apply: %v %q", derr, n.Body)
	}
}
