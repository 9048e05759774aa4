//go:build integration

package joplinops_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// TestRealJoplinConflictCopies checks on real Joplin what the conflict
// reporting relies on: a conflict copy (what Joplin's synchroniser makes
// when both sides changed a note: is_conflict, conflict_original_id) is
// hidden from GET /notes, listed first by include_conflicts with
// order_by=is_conflict DESC, and read by GET /notes/:id; joplin_status
// counts it and get_note links the note and its copy.
func TestRealJoplinConflictCopies(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	jc, err := joplin.New(joplin.Config{BaseURL: j.URL(), TokenFile: j.TokenFile, AvailabilityWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	syncDir := t.TempDir()
	os.WriteFile(filepath.Join(syncDir, syncstate.StatusFile), []byte(`{"schema":1,"target":"webdav","state":"idle","completed_syncs":1}`), 0o600)
	reg, err := registry.New(joplinops.Operations(jc, joplinops.DefaultLimits,
		joplinops.WithReceiptDir(t.TempDir(), receipts.DefaultLimits),
		joplinops.WithSyncState(syncstate.NewReader(syncDir)))...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args any, out any) {
		t.Helper()
		b, _ := json.Marshal(args)
		res, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, b)
		if derr != nil {
			t.Fatalf("%s: %v", name, derr)
		}
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var nb, note struct{ ID string }
	call("create_notebook", map[string]any{"title": "Inbox"}, &nb)
	for i := range 3 { // notes that sort around the copy by every other field
		var n struct{ ID string }
		call("create_note", map[string]any{"notebook_id": nb.ID, "title": "n" + string(rune('a'+i)), "body": "x"}, &n)
	}
	call("create_note", map[string]any{"notebook_id": nb.ID, "title": "plan", "body": "v1"}, &note)
	var cp struct{ ID string }
	if err := jc.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "plan", "body": "local edit", "parent_id": nb.ID}, &cp); err != nil {
		t.Fatal(err)
	}
	if err := jc.Write(ctx, "PUT", "/notes/"+cp.ID, nil, map[string]any{"is_conflict": 1, "conflict_original_id": note.ID}, nil); err != nil {
		t.Fatal(err)
	}

	var listed struct {
		Items []struct{ ID string } `json:"items"`
	}
	if err := jc.Get(ctx, "/notes", url.Values{"fields": {"id"}}, &listed); err != nil {
		t.Fatal(err)
	}
	for _, it := range listed.Items {
		if it.ID == cp.ID {
			t.Error("GET /notes lists the conflict copy")
		}
	}
	var got struct {
		IsConflict bool     `json:"is_conflict"`
		ConflictOf string   `json:"conflict_of"`
		Copies     []string `json:"conflict_copies"`
		Body       string   `json:"body"`
	}
	call("get_note", map[string]any{"id": cp.ID}, &got)
	if !got.IsConflict || got.ConflictOf != note.ID || got.Body != "local edit" {
		t.Errorf("get_note of the copy: %+v", got)
	}
	os.WriteFile(filepath.Join(syncDir, "tmp"), []byte(`{"schema":1,"target":"webdav","state":"idle","completed_syncs":2,
		"e2ee":{"enabled":true,"master_password_set":false,"password_ok":null,"items_encrypted":null}}`), 0o600)
	os.Rename(filepath.Join(syncDir, "tmp"), filepath.Join(syncDir, syncstate.StatusFile))
	got.Copies = nil
	call("get_note", map[string]any{"id": note.ID}, &got)
	if len(got.Copies) != 1 || got.Copies[0] != cp.ID {
		t.Errorf("get_note of the original: copies %v, want [%s]", got.Copies, cp.ID)
	}
	var st struct {
		Conflicts struct {
			Count  int `json:"count"`
			Copies []struct {
				ID         string `json:"id"`
				OriginalID string `json:"original_id"`
			} `json:"copies"`
		} `json:"conflicts"`
		Sync struct {
			State string `json:"state"`
			E2EE  struct {
				ItemsEncrypted *int64 `json:"items_encrypted"`
				Counted        string `json:"counted"`
			} `json:"e2ee"`
		} `json:"sync"`
	}
	call("joplin_status", map[string]any{}, &st)
	if st.Conflicts.Count != 1 || st.Conflicts.Copies[0].ID != cp.ID || st.Conflicts.Copies[0].OriginalID != note.ID || st.Sync.State != "idle" {
		t.Errorf("joplin_status: %+v", st)
	}
	// The encrypted-notes count (order_by=encryption_applied) works on
	// real Joplin: none here.
	if n := st.Sync.E2EE.ItemsEncrypted; n == nil || *n != 0 || st.Sync.E2EE.Counted != "notes" {
		t.Errorf("items_encrypted %v counted %q, want 0 notes", n, st.Sync.E2EE.Counted)
	}
}

// TestRealJoplinSyncedNotesAreFoundWithinTwoSeconds: what a sync applies
// to a real Joplin (a new note with a tag, and a tag link on a note that
// was there) is found by search, tag included, within 2 s of the
// supervisor reporting the completed sync; the time is logged.
func TestRealJoplinSyncedNotesAreFoundWithinTwoSeconds(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	jc, err := joplin.New(joplin.Config{BaseURL: j.URL(), TokenFile: j.TokenFile, AvailabilityWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var nb, old struct{ ID string }
	must(t, jc.Write(ctx, "POST", "/folders", nil, map[string]any{"title": "Inbox"}, &nb))
	must(t, jc.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "old note", "body": "lemon", "parent_id": nb.ID}, &old))
	syncDir := t.TempDir()
	status := func(n int) {
		tmp := filepath.Join(syncDir, "tmp")
		os.WriteFile(tmp, []byte(`{"schema":1,"target":"webdav","state":"idle","completed_syncs":`+strconv.Itoa(n)+`}`), 0o600)
		must(t, os.Rename(tmp, filepath.Join(syncDir, syncstate.StatusFile)))
	}
	status(1)
	reader := syncstate.NewReader(syncDir)
	built := make(chan string, 100)
	x := joplinindex.New(jc, joplinindex.Config{Path: filepath.Join(t.TempDir(), "index.db"), Reconcile: time.Hour,
		SyncGeneration: reader.Generation, Applied: func(what string) {
			select {
			case built <- what:
			default:
			}
		}})
	t.Cleanup(func() { x.Close() })
	reg, err := registry.New(joplinops.Operations(jc, joplinops.DefaultLimits, joplinops.WithSearchIndex(x),
		joplinops.WithSyncState(reader))...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	x.Start()
	for what := range built {
		if what == "built" {
			break
		}
	}
	search := func(q string) []string {
		res, derr := ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "search", json.RawMessage(`{"query":`+strconv.Quote(q)+`}`))
		if derr != nil {
			t.Fatal(derr)
		}
		var out struct {
			Items []struct{ Title string } `json:"results"`
			Index string                   `json:"index"`
		}
		json.Unmarshal(res, &out)
		var titles []string
		for _, it := range out.Items {
			titles = append(titles, it.Title)
		}
		slices.Sort(titles)
		return titles
	}

	// What a sync from the phone applies, then reports.
	var tag struct{ ID string }
	must(t, jc.Write(ctx, "POST", "/notes", nil, map[string]any{"title": "from the phone", "body": "kiwi", "parent_id": nb.ID, "tags": "groceries"}, nil))
	var tags struct {
		Items []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"items"`
	}
	must(t, jc.Get(ctx, "/tags", url.Values{"fields": {"id,title"}}, &tags))
	for _, tg := range tags.Items {
		if tg.Title == "groceries" {
			tag.ID = tg.ID
		}
	}
	must(t, jc.Write(ctx, "POST", "/tags/"+tag.ID+"/notes", nil, map[string]any{"id": old.ID}, nil))
	start := time.Now()
	status(2)
	want := []string{"from the phone", "old note"}
	for {
		got := search("tag:groceries")
		if slices.Equal(got, want) && slices.Equal(search("kiwi"), []string{"from the phone"}) {
			break
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("2 s after the sync was reported: tag:groceries = %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("synced note and tag links found %v after the sync was reported", time.Since(start).Round(time.Millisecond))
}
