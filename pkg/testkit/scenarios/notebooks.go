package scenarios

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

// NotebookScenarios covers the notebook operations.
func NotebookScenarios(t *testing.T, env Env) {
	t.Run("create_and_get", func(t *testing.T) { notebookCreateAndGet(t, env) })
	t.Run("duplicates", func(t *testing.T) { notebookDuplicates(t, env) })
	t.Run("update_and_move", func(t *testing.T) { notebookUpdate(t, env) })
	t.Run("trash_and_restore", func(t *testing.T) { notebookTrashRestore(t, env) })
	t.Run("restore_under_trashed_parent", func(t *testing.T) { notebookRestoreOrphan(t, env) })
}

type notebookOut struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	ParentID    string `json:"parent_id"`
	Trashed     bool   `json:"trashed"`
	CreatedTime int64  `json:"created_time"`
	Children    []struct {
		ID      string `json:"id"`
		Title   string `json:"title"`
		Trashed bool   `json:"trashed"`
	} `json:"children"`
}

type restoreOut struct {
	AlreadyRestored   bool `json:"already_restored"`
	RestoredNotebooks int  `json:"restored_notebooks"`
	RestoredNotes     int  `json:"restored_notes"`
	MovedToTopLevel   bool `json:"moved_to_top_level"`
	LeftInTrash       int  `json:"left_in_trash"`
}

// rawItem is a folder or note as read directly from Joplin.
type rawItem struct {
	ID          string `json:"id"`
	ParentID    string `json:"parent_id"`
	Title       string `json:"title"`
	DeletedTime int64  `json:"deleted_time"`
}

// seedNote creates a note directly in Joplin and returns its id.
func seedNote(t *testing.T, env Env, notebook, title string) string {
	t.Helper()
	var out rawItem
	if err := env.Joplin.Write(context.Background(), "POST", "/notes", nil,
		map[string]any{"parent_id": notebook, "title": title}, &out); err != nil || out.ID == "" {
		t.Fatalf("seed note %q: %v", title, err)
	}
	return out.ID
}

// trashDirect moves a note or folder ("notes" or "folders") to the trash directly in Joplin.
func trashDirect(t *testing.T, env Env, kind, id string) {
	t.Helper()
	if err := env.Joplin.Write(context.Background(), "DELETE", "/"+kind+"/"+id, nil, nil, nil); err != nil {
		t.Fatalf("trash %s %s: %v", kind, id, err)
	}
}

// readItem returns a note or folder as Joplin has it.
func readItem(t *testing.T, env Env, kind, id string) rawItem {
	t.Helper()
	var it rawItem
	if err := env.Joplin.Get(context.Background(), "/"+kind+"/"+id, url.Values{"fields": {"id,parent_id,title,deleted_time"}}, &it); err != nil {
		t.Fatalf("read %s %s: %v", kind, id, err)
	}
	return it
}

// countFolders counts the folders under parent, trashed ones included,
// whose title matches title ignoring case and runs of whitespace.
func countFolders(t *testing.T, env Env, parent, title string) int {
	t.Helper()
	all, err := joplin.ListAll[rawItem](context.Background(), env.Joplin, "/search",
		url.Values{"type": {"folder"}, "query": {"*"}, "fields": {"id,parent_id,title"}}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range all {
		if f.ParentID == parent && strings.EqualFold(strings.Join(strings.Fields(f.Title), " "), title) {
			n++
		}
	}
	return n
}

func notebookCreateAndGet(t *testing.T, env Env) {
	title := unique(t, "Projects")
	var root notebookOut
	mustCall(t, env, "create_notebook", map[string]any{"title": title}, &root)
	if root.ID == "" || root.Title != title || root.ParentID != "" || root.Trashed || root.CreatedTime == 0 || len(root.Children) != 0 {
		t.Fatalf("created: %+v", root)
	}
	var child notebookOut
	mustCall(t, env, "create_notebook", map[string]any{"title": "Child", "parent_id": root.ID}, &child)
	if child.ParentID != root.ID {
		t.Fatalf("child: %+v", child)
	}
	var got notebookOut
	mustCall(t, env, "get_notebook", map[string]any{"id": root.ID}, &got)
	if got.Title != title || got.Trashed || len(got.Children) != 1 || got.Children[0].ID != child.ID || got.Children[0].Trashed {
		t.Fatalf("get_notebook: %+v", got)
	}
	var tree struct {
		Notebooks []node `json:"notebooks"`
	}
	mustCall(t, env, "list_notebooks", map[string]any{}, &tree)
	if r := find(tree.Notebooks, root.ID); r == nil || len(r.Children) != 1 || r.Children[0].ID != child.ID {
		t.Fatalf("list_notebooks: %+v", r)
	}

	e := wantErr(t, env, "create_notebook", map[string]any{"title": "x", "parent_id": joplin.NewID()}, domainerr.NotFound)
	if e.Details["missing"] != "parent" {
		t.Fatalf("missing parent: %+v", e.Details)
	}
	wantErr(t, env, "get_notebook", map[string]any{"id": joplin.NewID()}, domainerr.NotFound)
	wantErr(t, env, "create_notebook", map[string]any{"title": "Conflicts", "parent_id": root.ID}, domainerr.InvalidArgument)
	wantErr(t, env, "create_notebook", map[string]any{"title": " \t", "parent_id": root.ID}, domainerr.InvalidArgument)
	if n := countFolders(t, env, root.ID, "conflicts") + countFolders(t, env, root.ID, ""); n != 0 {
		t.Fatalf("refused creates wrote %d notebooks", n)
	}
}

func notebookDuplicates(t *testing.T, env Env) {
	root := Folder(t, env, unique(t, "Dup root"), "")
	other := Folder(t, env, unique(t, "Dup other"), "")
	var first notebookOut
	mustCall(t, env, "create_notebook", map[string]any{"title": "Plans  2024", "parent_id": root}, &first)
	for _, variant := range []string{"Plans  2024", "plans 2024", "  PLANS\t2024 ", "/Plans 2024"} {
		e := wantErr(t, env, "create_notebook", map[string]any{"title": variant, "parent_id": root}, domainerr.NotebookAlreadyExists)
		if e.Retryable || e.Details["update_tool"] != "update_notebook" || !strings.Contains(fmt.Sprint(e.Details["matches"]), first.ID) {
			t.Fatalf("variant %q: %+v", variant, e)
		}
	}
	// Another parent is another identity.
	mustCall(t, env, "create_notebook", map[string]any{"title": "Plans 2024", "parent_id": other}, nil)

	// Every match is listed, including one made by another client.
	second := Folder(t, env, "PLANS 2024", root)
	e := wantErr(t, env, "create_notebook", map[string]any{"title": "plans 2024", "parent_id": root}, domainerr.NotebookAlreadyExists)
	if m := fmt.Sprint(e.Details["matches"]); !strings.Contains(m, first.ID) || !strings.Contains(m, second) {
		t.Fatalf("not every match listed: %v", m)
	}
	if n := countFolders(t, env, root, "plans 2024"); n != 2 {
		t.Fatalf("duplicate written: %d notebooks titled plans 2024", n)
	}

	// A trashed notebook still blocks, and the error points at restore_notebook.
	archive := Folder(t, env, "Archive", root)
	trashDirect(t, env, "folders", archive)
	e = wantErr(t, env, "create_notebook", map[string]any{"title": "archive", "parent_id": root}, domainerr.NotebookAlreadyExists)
	if e.Details["restore_tool"] != "restore_notebook" || !strings.Contains(fmt.Sprint(e.Details["matches"]), archive) ||
		!strings.Contains(fmt.Sprint(e.Details["matches"]), "true") {
		t.Fatalf("trashed match: %+v", e.Details)
	}
	if n := countFolders(t, env, root, "archive"); n != 1 {
		t.Fatalf("duplicate written: %d notebooks titled archive", n)
	}
	// A trashed parent is refused with a pointer to restore_notebook.
	e = wantErr(t, env, "create_notebook", map[string]any{"title": "Inside", "parent_id": archive}, domainerr.InvalidArgument)
	if e.Details["restore_tool"] != "restore_notebook" || countFolders(t, env, archive, "inside") != 0 {
		t.Fatalf("trashed parent: %+v", e.Details)
	}
}

func notebookUpdate(t *testing.T, env Env) {
	a := Folder(t, env, unique(t, "A"), "")
	b := Folder(t, env, "B", a)
	sibling := Folder(t, env, "Sibling", a)
	c := Folder(t, env, unique(t, "C"), b)
	d := Folder(t, env, unique(t, "D"), "")

	for _, target := range []string{a, b, c} {
		wantErr(t, env, "update_notebook", map[string]any{"id": a, "parent_id": target}, domainerr.InvalidArgument)
	}
	wantErr(t, env, "update_notebook", map[string]any{"id": a}, domainerr.InvalidArgument)
	wantErr(t, env, "update_notebook", map[string]any{"id": joplin.NewID(), "title": "x"}, domainerr.NotFound)
	e := wantErr(t, env, "update_notebook", map[string]any{"id": c, "parent_id": joplin.NewID()}, domainerr.NotFound)
	if e.Details["missing"] != "parent" {
		t.Fatalf("missing parent: %+v", e.Details)
	}
	e = wantErr(t, env, "update_notebook", map[string]any{"id": b, "title": " sibling "}, domainerr.NotebookAlreadyExists)
	if !strings.Contains(fmt.Sprint(e.Details["matches"]), sibling) {
		t.Fatalf("rename onto a sibling: %+v", e.Details)
	}
	if got := readItem(t, env, "folders", a); got.ParentID != "" {
		t.Fatalf("refused move changed the parent to %q", got.ParentID)
	}
	if got := readItem(t, env, "folders", b); got.Title != "B" {
		t.Fatalf("refused rename wrote %q", got.Title)
	}

	var nb notebookOut
	mustCall(t, env, "update_notebook", map[string]any{"id": b, "title": "Renamed"}, &nb)
	if nb.Title != "Renamed" || nb.ParentID != a || len(nb.Children) != 1 || nb.Children[0].ID != c {
		t.Fatalf("rename: %+v", nb)
	}
	// Renaming to a different case of its own title is not a conflict.
	mustCall(t, env, "update_notebook", map[string]any{"id": b, "title": "RENAMED"}, &nb)
	mustCall(t, env, "update_notebook", map[string]any{"id": c, "parent_id": d}, &nb)
	if nb.ParentID != d || readItem(t, env, "folders", c).ParentID != d {
		t.Fatalf("move: %+v", nb)
	}
	mustCall(t, env, "update_notebook", map[string]any{"id": c, "parent_id": ""}, &nb)
	if nb.ParentID != "" || readItem(t, env, "folders", c).ParentID != "" {
		t.Fatalf("move to top level: %+v", nb)
	}
	title := unique(t, "Both")
	mustCall(t, env, "update_notebook", map[string]any{"id": c, "title": title, "parent_id": a}, &nb)
	if got := readItem(t, env, "folders", c); got.Title != title || got.ParentID != a {
		t.Fatalf("rename and move: %+v", got)
	}
	trashDirect(t, env, "folders", d)
	e = wantErr(t, env, "update_notebook", map[string]any{"id": c, "parent_id": d}, domainerr.InvalidArgument)
	if e.Details["restore_tool"] != "restore_notebook" || readItem(t, env, "folders", c).ParentID != a {
		t.Fatalf("move into a trashed notebook: %+v", e.Details)
	}
}

// notebookTrashRestore trashes a tree and restores it. A note trashed on its
// own well before (more than joplinops.TrashBatchGap) stays in the trash.
func notebookTrashRestore(t *testing.T, env Env) {
	r := Folder(t, env, unique(t, "Tree"), "")
	s := Folder(t, env, "Sub", r)
	ss := Folder(t, env, "Subsub", s)
	notes := map[string]string{seedNote(t, env, r, "n1"): r, seedNote(t, env, s, "n2"): s, seedNote(t, env, ss, "n3"): ss}
	early := seedNote(t, env, s, "trashed before")
	trashDirect(t, env, "notes", early)
	time.Sleep(time.Duration(joplinops.TrashBatchGap+300) * time.Millisecond)

	var out map[string]any
	mustCall(t, env, "trash_notebook", map[string]any{"id": r}, &out)
	if out["trashed"] != true || out["already_trashed"] != false {
		t.Fatalf("trash_notebook: %v", out)
	}
	for id := range notes {
		if readItem(t, env, "notes", id).DeletedTime == 0 {
			t.Fatalf("note %s not trashed with its notebook", id)
		}
	}
	var tree struct {
		Notebooks []node `json:"notebooks"`
	}
	mustCall(t, env, "list_notebooks", map[string]any{}, &tree)
	if find(tree.Notebooks, r) != nil || find(tree.Notebooks, s) != nil {
		t.Fatal("list_notebooks shows a trashed notebook")
	}
	var got notebookOut
	mustCall(t, env, "get_notebook", map[string]any{"id": r}, &got)
	if !got.Trashed || len(got.Children) != 1 || got.Children[0].ID != s || !got.Children[0].Trashed {
		t.Fatalf("get_notebook of a trashed notebook: %+v", got)
	}
	mustCall(t, env, "trash_notebook", map[string]any{"id": r}, &out)
	if out["already_trashed"] != true {
		t.Fatalf("second trash: %v", out)
	}

	var res restoreOut
	mustCall(t, env, "restore_notebook", map[string]any{"id": r}, &res)
	if res.AlreadyRestored || res.RestoredNotebooks != 3 || res.RestoredNotes != 3 || res.MovedToTopLevel || res.LeftInTrash != 1 {
		t.Fatalf("restore_notebook: %+v", res)
	}
	for id, parent := range map[string]string{r: "", s: r, ss: s} {
		if f := readItem(t, env, "folders", id); f.DeletedTime != 0 || f.ParentID != parent {
			t.Fatalf("folder %s after restore: %+v", id, f)
		}
	}
	for id, parent := range notes {
		if n := readItem(t, env, "notes", id); n.DeletedTime != 0 || n.ParentID != parent {
			t.Fatalf("note %s after restore: %+v", id, n)
		}
	}
	if readItem(t, env, "notes", early).DeletedTime == 0 {
		t.Fatal("a note trashed on its own earlier was restored")
	}
	mustCall(t, env, "list_notebooks", map[string]any{}, &tree)
	if n := find(tree.Notebooks, r); n == nil || len(n.Children) != 1 || len(n.Children[0].Children) != 1 || n.Children[0].Children[0].ID != ss {
		t.Fatalf("restored tree: %+v", n)
	}
	mustCall(t, env, "restore_notebook", map[string]any{"id": r}, &res)
	if !res.AlreadyRestored || res.RestoredNotebooks != 0 || res.RestoredNotes != 0 {
		t.Fatalf("second restore: %+v", res)
	}
	wantErr(t, env, "trash_notebook", map[string]any{"id": joplin.NewID()}, domainerr.NotFound)
	wantErr(t, env, "restore_notebook", map[string]any{"id": joplin.NewID()}, domainerr.NotFound)
}

// notebookRestoreOrphan restores a notebook whose parent stays in the
// trash: it moves to the top level, with its notes.
func notebookRestoreOrphan(t *testing.T, env Env) {
	p := Folder(t, env, unique(t, "Parent"), "")
	q := Folder(t, env, unique(t, "Orphan"), p)
	n := seedNote(t, env, q, "inside")
	mustCall(t, env, "trash_notebook", map[string]any{"id": p}, nil)
	var res restoreOut
	mustCall(t, env, "restore_notebook", map[string]any{"id": q}, &res)
	if !res.MovedToTopLevel || res.RestoredNotebooks != 1 || res.RestoredNotes != 1 || res.LeftInTrash != 0 {
		t.Fatalf("restore under a trashed parent: %+v", res)
	}
	if f := readItem(t, env, "folders", q); f.DeletedTime != 0 || f.ParentID != "" {
		t.Fatalf("orphan after restore: %+v", f)
	}
	if readItem(t, env, "folders", p).DeletedTime == 0 || readItem(t, env, "notes", n).DeletedTime != 0 {
		t.Fatal("parent restored, or note left in the trash")
	}
	mustCall(t, env, "restore_notebook", map[string]any{"id": p}, &res)
	if res.MovedToTopLevel || res.RestoredNotebooks != 1 || res.RestoredNotes != 0 {
		t.Fatalf("restoring the parent afterwards: %+v", res)
	}
}
