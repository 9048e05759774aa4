// Package scenarios holds end-to-end scenarios for the Joplin operations,
// written once and run both against the in-memory fake (hermetic tests) and
// against a real Joplin container (integration tests), through whatever
// adapter the caller wires into Env.Call.
package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// Env is what a scenario needs.
type Env struct {
	// Joplin seeds and inspects data directly, bypassing the bridge.
	Joplin *joplin.Client
	// Call invokes an operation through the bridge and returns its result
	// object or its domain error.
	Call func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error)
	// Reindex makes Joplin's search index see the current notes (the CLI
	// server only indexes at start, so a real run restarts Joplin).
	Reindex func(t *testing.T)
	// MaxResponseChars is the transport's response limit (GPT Actions:
	// 100,000); 0 means none.
	MaxResponseChars int
}

// All runs every scenario as a subtest. Each one creates its own uniquely
// named notebooks, so they can share one Joplin.
func All(t *testing.T, env Env) {
	t.Run("status", func(t *testing.T) { Status(t, env) })
	t.Run("create_note_and_get", func(t *testing.T) { CreateAndGet(t, env) })
	t.Run("create_note_duplicates", func(t *testing.T) { CreateDuplicates(t, env) })
	t.Run("concurrent_creates", func(t *testing.T) { ConcurrentCreates(t, env) })
	t.Run("list_notebooks_tree", func(t *testing.T) { NotebookTree(t, env) })
	t.Run("invalid_input_writes_nothing", func(t *testing.T) { InvalidInput(t, env) })
	t.Run("notes", func(t *testing.T) { NoteScenarios(t, env) })
	t.Run("notebooks", func(t *testing.T) { NotebookScenarios(t, env) })
	t.Run("tags", func(t *testing.T) { TagScenarios(t, env) })
	t.Run("resources", func(t *testing.T) { ResourceScenarios(t, env) })
	t.Run("note_changes", func(t *testing.T) { ChangeScenarios(t, env) })
	t.Run("read_more", func(t *testing.T) { ReadMoreScenarios(t, env) })
	if env.Reindex != nil {
		t.Run("search", func(t *testing.T) { Search(t, env) })
	}
}

// Folder creates a notebook directly in Joplin and returns its id.
func Folder(t testing.TB, env Env, title, parent string) string {
	t.Helper()
	body := map[string]any{"title": title}
	if parent != "" {
		body["parent_id"] = parent
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := env.Joplin.Write(context.Background(), "POST", "/folders", nil, body, &out); err != nil || out.ID == "" {
		t.Fatalf("seed folder %q: %v", title, err)
	}
	return out.ID
}

func mustCall(t *testing.T, env Env, name string, args any, out any) {
	t.Helper()
	res, derr := env.Call(context.Background(), name, args)
	if derr != nil {
		t.Fatalf("%s: %v (%v)", name, derr, derr.Details)
	}
	if out != nil {
		// A reused out starts empty: a field the answer omits (trashed,
		// the to-do fields when unset) must not keep an earlier value.
		reflect.ValueOf(out).Elem().SetZero()
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, res, err)
		}
	}
}

func wantErr(t *testing.T, env Env, name string, args any, code domainerr.Code) *domainerr.Error {
	t.Helper()
	res, derr := env.Call(context.Background(), name, args)
	if derr == nil || derr.Code != code {
		t.Fatalf("%s: want %s, got %v (result %s)", name, code, derr, res)
	}
	return derr
}

// unique makes titles unique per run so scenarios can share one Joplin.
func unique(t *testing.T, s string) string {
	return fmt.Sprintf("%s %s %s", s, strings.ReplaceAll(t.Name(), "/", "-"), joplin.NewID()[:8])
}

type note struct {
	ID         string  `json:"id"`
	NotebookID string  `json:"notebook_id"`
	Title      string  `json:"title"`
	Body       *string `json:"body"`
	Trashed    bool    `json:"trashed"`
}

// Status checks joplin_status against a reachable, authenticated Joplin.
func Status(t *testing.T, env Env) {
	var st struct {
		Reachable, Authenticated bool
	}
	mustCall(t, env, "joplin_status", map[string]any{}, &st)
	if !st.Reachable || !st.Authenticated {
		t.Fatalf("status: %+v", st)
	}
}

// CreateAndGet creates a note and reads it back with and without its body.
func CreateAndGet(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Inbox"), "")
	var created note
	mustCall(t, env, "create_note", map[string]any{"notebook_id": nb, "title": "Groceries", "body": "- milk\n- ünïcode ✓"}, &created)
	if created.ID == "" || created.NotebookID != nb || created.Body == nil || *created.Body != "- milk\n- ünïcode ✓" {
		t.Fatalf("created: %+v", created)
	}
	var got note
	mustCall(t, env, "get_note", map[string]any{"id": created.ID}, &got)
	if got.Title != "Groceries" || got.Body == nil || *got.Body != "- milk\n- ünïcode ✓" || got.Trashed {
		t.Fatalf("get_note: %+v", got)
	}
	var bare note
	mustCall(t, env, "get_note", map[string]any{"id": created.ID, "include_body": false}, &bare)
	if bare.Body != nil {
		t.Fatal("include_body=false returned a body")
	}
	wantErr(t, env, "get_note", map[string]any{"id": joplin.NewID()}, domainerr.NotFound)
	wantErr(t, env, "create_note", map[string]any{"notebook_id": joplin.NewID(), "title": "x"}, domainerr.NotFound)
}

// CreateDuplicates checks NOTE_ALREADY_EXISTS for normalized title matches,
// trashed matches included, and that nothing is written on a match.
func CreateDuplicates(t *testing.T, env Env) {
	ctx := context.Background()
	nb := Folder(t, env, unique(t, "Dups"), "")
	other := Folder(t, env, unique(t, "Other"), "")
	var first note
	mustCall(t, env, "create_note", map[string]any{"notebook_id": nb, "title": "Meeting  Notes"}, &first)
	for _, variant := range []string{"Meeting  Notes", "  meeting notes ", "MEETING\tNOTES", "Meeting Notes"} {
		e := wantErr(t, env, "create_note", map[string]any{"notebook_id": nb, "title": variant}, domainerr.NoteAlreadyExists)
		if e.Retryable || e.Details["update_tool"] != "update_note" || !strings.Contains(fmt.Sprint(e.Details["matches"]), first.ID) {
			t.Fatalf("variant %q: %+v", variant, e)
		}
	}
	// NFC: "é" precomposed vs "e" + combining acute.
	mustCall(t, env, "create_note", map[string]any{"notebook_id": nb, "title": "Caf\u00e9"}, nil)
	wantErr(t, env, "create_note", map[string]any{"notebook_id": nb, "title": "Cafe\u0301"}, domainerr.NoteAlreadyExists)
	// Same title in another notebook is a different identity.
	mustCall(t, env, "create_note", map[string]any{"notebook_id": other, "title": "Meeting Notes"}, nil)

	// A trashed note still blocks, and the error points at restore_note.
	var doomed note
	mustCall(t, env, "create_note", map[string]any{"notebook_id": nb, "title": "Old plan"}, &doomed)
	if err := env.Joplin.Write(ctx, "DELETE", "/notes/"+doomed.ID, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	e := wantErr(t, env, "create_note", map[string]any{"notebook_id": nb, "title": "old plan"}, domainerr.NoteAlreadyExists)
	if e.Details["restore_tool"] != "restore_note" || !strings.Contains(fmt.Sprint(e.Details["matches"]), "true") {
		t.Fatalf("trashed match: %+v", e.Details)
	}
	if n := countNotes(t, env, nb, "old plan"); n != 1 {
		t.Fatalf("duplicate written: %d notes titled old plan", n)
	}
	// Creating into a trashed notebook is refused.
	gone := Folder(t, env, unique(t, "Gone"), "")
	if err := env.Joplin.Write(ctx, "DELETE", "/folders/"+gone, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	wantErr(t, env, "create_note", map[string]any{"notebook_id": gone, "title": "x"}, domainerr.InvalidArgument)
}

func countNotes(t *testing.T, env Env, notebook, title string) int {
	t.Helper()
	all, err := joplin.ListAll[struct {
		ParentID string `json:"parent_id"`
		Title    string `json:"title"`
	}](context.Background(), env.Joplin, "/notes", url.Values{"fields": {"id,parent_id,title"}, "include_deleted": {"1"}}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range all {
		if x.ParentID == notebook && strings.EqualFold(strings.TrimSpace(x.Title), title) {
			n++
		}
	}
	return n
}

// ConcurrentCreates fires 20 identical creates at once: exactly one wins.
func ConcurrentCreates(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Race"), "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, dups := 0, 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, derr := env.Call(context.Background(), "create_note", map[string]any{"notebook_id": nb, "title": "Same"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case derr == nil:
				wins++
			case derr.Code == domainerr.NoteAlreadyExists:
				dups++
			default:
				t.Errorf("unexpected error: %v", derr)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || dups != 19 || countNotes(t, env, nb, "same") != 1 {
		t.Fatalf("wins %d dups %d stored %d", wins, dups, countNotes(t, env, nb, "same"))
	}
}

type node struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Children []node `json:"children"`
}

func find(nodes []node, id string) *node {
	for i := range nodes {
		if nodes[i].ID == id {
			return &nodes[i]
		}
		if n := find(nodes[i].Children, id); n != nil {
			return n
		}
	}
	return nil
}

// NotebookTree checks list_notebooks nests children under parents.
func NotebookTree(t *testing.T, env Env) {
	root := Folder(t, env, unique(t, "Root"), "")
	child := Folder(t, env, "Child B", root)
	Folder(t, env, "Child A", root)
	grand := Folder(t, env, "Grandchild", child)
	var out struct {
		Notebooks []node `json:"notebooks"`
		Total     int    `json:"total"`
	}
	mustCall(t, env, "list_notebooks", map[string]any{}, &out)
	r := find(out.Notebooks, root)
	if r == nil || len(r.Children) != 2 || r.Children[0].Title != "Child A" || r.Children[1].ID != child {
		t.Fatalf("tree under root: %+v", r)
	}
	if c := find(r.Children, child); c == nil || len(c.Children) != 1 || c.Children[0].ID != grand {
		t.Fatalf("grandchild: %+v", c)
	}
	if out.Total < 4 {
		t.Fatalf("total %d", out.Total)
	}
}

// InvalidInput checks that schema-invalid calls are refused with the
// failing paths and write nothing.
func InvalidInput(t *testing.T, env Env) {
	nb := Folder(t, env, unique(t, "Strict"), "")
	cases := []map[string]any{
		{"notebook_id": nb},                                    // missing title
		{"notebook_id": nb, "title": ""},                       // too short
		{"notebook_id": nb, "title": "x", "unknown": true},     // unknown key
		{"notebook_id": "NOT-AN-ID", "title": "x"},             // bad id
		{"notebook_id": nb, "title": strings.Repeat("t", 501)}, // too long
		{"notebook_id": nb, "title": "x", "is_todo": "yes"},    // wrong type
		{"notebook_id": nb, "title": "x", "todo_due": -1},      // below minimum
	}
	for _, args := range cases {
		e := wantErr(t, env, "create_note", args, domainerr.InvalidArgument)
		if e.Details["problems"] == nil {
			t.Errorf("%v: no problems listed", args)
		}
	}
	if n := countNotes(t, env, nb, "x"); n != 0 {
		t.Fatalf("invalid input wrote %d notes", n)
	}
}
