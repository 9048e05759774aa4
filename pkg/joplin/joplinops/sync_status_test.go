package joplinops_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// syncHarness is a fake Joplin with a sync state directory, as compose
// shares it with the bridge.
type syncHarness struct {
	fake    *joplinfake.Server
	c       *joplin.Client
	ex      *executor.Executor
	syncDir string
	gen     int
}

func newSyncHarness(t *testing.T, withDir bool) *syncHarness {
	t.Helper()
	fake, url, tf := joplinfake.Serve(t, token)
	c, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf, AvailabilityWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := &syncHarness{fake: fake, c: c}
	if withDir {
		h.syncDir = t.TempDir()
	}
	reg, err := registry.New(joplinops.Operations(c, joplinops.DefaultLimits,
		joplinops.WithReceiptDir(t.TempDir(), receipts.DefaultLimits),
		joplinops.WithSyncState(syncstate.NewReader(h.syncDir)))...)
	if err != nil {
		t.Fatal(err)
	}
	if h.ex, err = executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation()); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *syncHarness) call(t *testing.T, name string, args any, out any) {
	t.Helper()
	b, _ := json.Marshal(args)
	res, derr := h.ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, b)
	if derr != nil {
		t.Fatalf("%s: %v", name, derr)
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatal(err)
	}
}

// writeStatus replaces status.json as the supervisor does; each call is a
// new version (a distinct modification time).
func (h *syncHarness) writeStatus(t *testing.T, content string) {
	t.Helper()
	h.gen++
	tmp := filepath.Join(h.syncDir, "tmp")
	os.WriteFile(tmp, []byte(content), 0o600)
	mod := time.Date(2026, 12, 2, 1, 0, h.gen, 0, time.UTC)
	os.Chtimes(tmp, mod, mod)
	if err := os.Rename(tmp, filepath.Join(h.syncDir, syncstate.StatusFile)); err != nil {
		t.Fatal(err)
	}
}

type statusAnswer struct {
	Authenticated bool `json:"authenticated"`
	Sync          struct {
		Configured    bool   `json:"configured"`
		Target        string `json:"target"`
		State         string `json:"state"`
		LastSuccessAt string `json:"last_success_at"`
		LastError     *struct {
			Code, Setting, Message string
		} `json:"last_error"`
		E2EE *struct {
			Enabled        bool   `json:"enabled"`
			ItemsEncrypted *int64 `json:"items_encrypted"`
		} `json:"e2ee"`
		Message string `json:"message"`
	} `json:"sync"`
	Conflicts *struct {
		Count     int  `json:"count"`
		Truncated bool `json:"truncated"`
		Copies    []struct {
			ID         string `json:"id"`
			OriginalID string `json:"original_id"`
		} `json:"copies"`
	} `json:"conflicts"`
}

func TestJoplinStatusReportsSync(t *testing.T) {
	h := newSyncHarness(t, true)
	var st statusAnswer
	h.call(t, "joplin_status", map[string]any{}, &st)
	if st.Sync.Configured || st.Sync.State != "unknown" || !strings.Contains(st.Sync.Message, "not reported") {
		t.Errorf("before the supervisor writes: %+v", st.Sync)
	}
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"error","completed_syncs":4,
		"last_success_at":"2026-12-02T01:00:00Z","consecutive_failures":1,
		"last_error":{"code":"SYNC_AUTH_FAILED","setting":"NOTEBRIDGE_SYNC_USER","message":"the server refused the login","at":"2026-12-02T01:05:00Z"},
		"e2ee":{"enabled":true,"master_password_set":true,"password_ok":true,"items_encrypted":2},"updated_at":"2026-12-02T01:05:00Z","new_field":[1]}`)
	h.call(t, "joplin_status", map[string]any{}, &st)
	s := st.Sync
	if !s.Configured || s.Target != "webdav" || s.State != "error" || s.LastSuccessAt != "2026-12-02T01:00:00Z" ||
		s.LastError == nil || s.LastError.Code != "SYNC_AUTH_FAILED" || s.LastError.Setting != "NOTEBRIDGE_SYNC_USER" ||
		s.E2EE == nil || !s.E2EE.Enabled || s.E2EE.ItemsEncrypted == nil || *s.E2EE.ItemsEncrypted != 2 ||
		!strings.Contains(s.Message, "SYNC_AUTH_FAILED") {
		t.Errorf("sync %+v", s)
	}
	if st.Conflicts == nil || st.Conflicts.Count != 0 || st.Conflicts.Copies == nil {
		t.Errorf("conflicts %+v", st.Conflicts)
	}
}

// TestJoplinStatusSurvivesACorruptSyncState: a status file that does not
// parse is an unknown state with the reason, never an error of the tool.
func TestJoplinStatusSurvivesACorruptSyncState(t *testing.T) {
	h := newSyncHarness(t, true)
	h.writeStatus(t, `{"schema":1,"state":`)
	var st statusAnswer
	h.call(t, "joplin_status", map[string]any{}, &st)
	if !st.Sync.Configured || st.Sync.State != "unknown" || !strings.Contains(st.Sync.Message, "not valid JSON") || !st.Authenticated {
		t.Errorf("corrupt status: %+v", st)
	}
	none := newSyncHarness(t, false)
	none.call(t, "joplin_status", map[string]any{}, &st)
	if st.Sync.Configured || st.Sync.State != "unknown" || !strings.Contains(st.Sync.Message, "--sync-state-dir") {
		t.Errorf("no sync state directory: %+v", st.Sync)
	}
}

// makeConflict does what Joplin's sync does when both sides changed a
// note: the local version becomes a new note with is_conflict and
// conflict_original_id, and the original takes the remote version.
func (h *syncHarness) makeConflict(t *testing.T, original, notebook string) string {
	t.Helper()
	ctx := context.Background()
	var cp struct{ ID string }
	if err := h.c.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "mine", "body": "local edit", "parent_id": notebook}, &cp); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Write(ctx, "PUT", "/notes/"+cp.ID, nil, map[string]any{"is_conflict": 1, "conflict_original_id": original}, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Write(ctx, "PUT", "/notes/"+original, nil, map[string]any{"body": "remote edit"}, nil); err != nil {
		t.Fatal(err)
	}
	return cp.ID
}

type noteAnswer struct {
	ID             string   `json:"id"`
	Body           string   `json:"body"`
	IsConflict     bool     `json:"is_conflict"`
	ConflictOf     string   `json:"conflict_of"`
	ConflictCopies []string `json:"conflict_copies"`
}

// TestConflictCopiesAreVisible: a conflict copy made by a sync shows in
// joplin_status, get_note of the original names it once the sync has
// completed, and get_note of the copy reads it (nothing is lost).
func TestConflictCopiesAreVisible(t *testing.T) {
	h := newSyncHarness(t, true)
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":1}`)
	var nb, note struct{ ID string }
	h.call(t, "create_notebook", map[string]any{"title": "Inbox"}, &nb)
	h.call(t, "create_note", map[string]any{"notebook_id": nb.ID, "title": "plan", "body": "v1"}, &note)
	var got noteAnswer
	h.call(t, "get_note", map[string]any{"id": note.ID}, &got)
	if len(got.ConflictCopies) != 0 || got.IsConflict {
		t.Fatalf("before any conflict: %+v", got)
	}

	cp := h.makeConflict(t, note.ID, nb.ID)
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":2}`)
	h.call(t, "get_note", map[string]any{"id": note.ID}, &got)
	if got.Body != "remote edit" || len(got.ConflictCopies) != 1 || got.ConflictCopies[0] != cp {
		t.Errorf("original after the sync: %+v", got)
	}
	got = noteAnswer{}
	h.call(t, "get_note", map[string]any{"id": cp}, &got)
	if got.Body != "local edit" || !got.IsConflict || got.ConflictOf != note.ID {
		t.Errorf("the conflict copy: %+v", got)
	}
	var st statusAnswer
	h.call(t, "joplin_status", map[string]any{}, &st)
	if st.Conflicts == nil || st.Conflicts.Count != 1 || st.Conflicts.Copies[0].ID != cp || st.Conflicts.Copies[0].OriginalID != note.ID {
		t.Errorf("status conflicts %+v", st.Conflicts)
	}
	// Trashing the copy after merging it resolves the conflict.
	var trashed map[string]any
	h.call(t, "trash_note", map[string]any{"id": cp}, &trashed)
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":3}`)
	h.call(t, "joplin_status", map[string]any{}, &st)
	got = noteAnswer{}
	h.call(t, "get_note", map[string]any{"id": note.ID}, &got)
	if st.Conflicts.Count != 0 || len(got.ConflictCopies) != 0 {
		t.Errorf("after trashing the copy: status %+v, note %+v", st.Conflicts, got)
	}
}

// TestGetNoteReadsConflictsOnlyAfterASync: get_note asks Joplin for the
// conflict copies only when a sync completed since it last did.
func TestGetNoteReadsConflictsOnlyAfterASync(t *testing.T) {
	h := newSyncHarness(t, true)
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":7}`)
	var nb, note struct{ ID string }
	h.call(t, "create_notebook", map[string]any{"title": "Inbox"}, &nb)
	h.call(t, "create_note", map[string]any{"notebook_id": nb.ID, "title": "plan"}, &note)
	count := func() int {
		n := 0
		for _, r := range h.fake.Requests() {
			if r.Method == "GET" && r.Path == "/notes" {
				n++
			}
		}
		return n
	}
	var got noteAnswer
	before := count()
	for range 3 {
		h.call(t, "get_note", map[string]any{"id": note.ID}, &got)
	}
	if n := count() - before; n != 1 {
		t.Errorf("3 get_note within one sync generation listed conflicts %d times, want 1", n)
	}
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":8}`)
	h.call(t, "get_note", map[string]any{"id": note.ID}, &got)
	if n := count() - before; n != 2 {
		t.Errorf("after a completed sync: %d conflict listings, want 2", n)
	}
}

// TestJoplinStatusCountsEncryptedNotes: when the Joplin container cannot
// count the items still encrypted (no master password yet), joplin_status
// counts the notes Joplin holds encrypted, under the same name as the
// container's count after a sync (items_encrypted; counted says which).
func TestJoplinStatusCountsEncryptedNotes(t *testing.T) {
	h := newSyncHarness(t, true)
	var nb, a, b struct{ ID string }
	h.call(t, "create_notebook", map[string]any{"title": "Inbox"}, &nb)
	h.call(t, "create_note", map[string]any{"notebook_id": nb.ID, "title": "a"}, &a)
	h.call(t, "create_note", map[string]any{"notebook_id": nb.ID, "title": "b"}, &b)
	h.fake.LeaveEncrypted(b.ID)
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"error","completed_syncs":1,
		"last_error":{"code":"E2EE_PASSWORD_MISSING","setting":"e2ee-master-password","message":"set it"},
		"e2ee":{"enabled":true,"master_password_set":false,"password_ok":null,"items_encrypted":null}}`)
	var st struct {
		Sync struct {
			E2EE struct {
				ItemsEncrypted *int64 `json:"items_encrypted"`
				Counted        string `json:"counted"`
			} `json:"e2ee"`
		} `json:"sync"`
	}
	h.call(t, "joplin_status", map[string]any{}, &st)
	if e := st.Sync.E2EE; e.ItemsEncrypted == nil || *e.ItemsEncrypted != 1 || e.Counted != "notes" {
		t.Errorf("e2ee %+v", e)
	}
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":2,
		"e2ee":{"enabled":true,"master_password_set":true,"password_ok":true,"items_encrypted":0}}`)
	st.Sync.E2EE.ItemsEncrypted, st.Sync.E2EE.Counted = nil, ""
	h.call(t, "joplin_status", map[string]any{}, &st)
	if e := st.Sync.E2EE; e.ItemsEncrypted == nil || *e.ItemsEncrypted != 0 || e.Counted != "items" {
		t.Errorf("reported by the container: %+v", e)
	}
}

// TestConflictCopyWithoutOriginal: Joplin leaves conflict_original_id
// empty for a copy whose original it no longer knows (older clients, a
// deleted original); joplin_status still answers, listing the copy
// without an original.
func TestConflictCopyWithoutOriginal(t *testing.T) {
	h := newSyncHarness(t, true)
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":1}`)
	var nb struct{ ID string }
	h.call(t, "create_notebook", map[string]any{"title": "Inbox"}, &nb)
	ctx := context.Background()
	var cp struct{ ID string }
	if err := h.c.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "orphan", "body": "kept", "parent_id": nb.ID}, &cp); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Write(ctx, "PUT", "/notes/"+cp.ID, nil, map[string]any{"is_conflict": 1}, nil); err != nil {
		t.Fatal(err)
	}
	h.writeStatus(t, `{"schema":1,"target":"webdav","state":"idle","completed_syncs":2}`)
	var st statusAnswer
	h.call(t, "joplin_status", map[string]any{}, &st)
	if st.Conflicts == nil || st.Conflicts.Count != 1 || st.Conflicts.Copies[0].ID != cp.ID || st.Conflicts.Copies[0].OriginalID != "" {
		t.Errorf("status conflicts %+v", st.Conflicts)
	}
}
