package joplinops

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// Notebook is one Joplin notebook as the notebook operations return it.
type Notebook struct {
	ID          string        `json:"id" schema:"id"`
	Title       string        `json:"title" schema:"max=10000"`
	ParentID    string        `json:"parent_id" schema:"max=32"`
	Trashed     bool          `json:"trashed"`
	CreatedTime int64         `json:"created_time" schema:"min=0,max=9007199254740992"`
	UpdatedTime int64         `json:"updated_time" schema:"min=0,max=9007199254740992"`
	Children    []NotebookRef `json:"children" schema:"max=@max_notebooks"`
}

// NotebookRef is a direct sub-notebook listed in a Notebook.
type NotebookRef struct {
	ID      string `json:"id" schema:"id"`
	Title   string `json:"title" schema:"max=10000"`
	Trashed bool   `json:"trashed"`
}

// notebookRow is a notebook as Joplin encodes it, timestamps included.
type notebookRow struct {
	apiFolder
	CreatedTime int64 `json:"created_time"`
	UpdatedTime int64 `json:"updated_time"`
}

// toNotebook combines a row with its direct sub-notebooks, taken from all.
func (r notebookRow) toNotebook(all []apiFolder) Notebook {
	kids := []NotebookRef{}
	for _, f := range all {
		if f.ParentID == r.ID && f.ID != r.ID {
			kids = append(kids, NotebookRef{ID: f.ID, Title: f.Title, Trashed: f.DeletedTime > 0})
		}
	}
	slices.SortFunc(kids, func(a, b NotebookRef) int {
		return cmp.Or(strings.Compare(NormalizeTitle(a.Title), NormalizeTitle(b.Title)), strings.Compare(a.ID, b.ID))
	})
	return Notebook{
		ID: r.ID, Title: r.Title, ParentID: r.ParentID, Trashed: r.DeletedTime > 0,
		CreatedTime: r.CreatedTime, UpdatedTime: r.UpdatedTime, Children: kids,
	}
}

// notFound is the NOT_FOUND error for object id, naming which object (role)
// is missing in the message and in details.missing.
func notFound(role, id string) *domainerr.Error {
	return domainerr.New(domainerr.NotFound, "%s %s does not exist", role, id).
		WithDetails(map[string]any{"missing": role, "id": id})
}

// missing turns Joplin's NOT_FOUND for id into notFound(role, id).
func missing(err error, role, id string) error {
	if de, ok := domainerr.As(err); ok && de.Code == domainerr.NotFound {
		return notFound(role, id)
	}
	return err
}

// loadNotebook reads one notebook, trashed or not; role names it in a
// NOT_FOUND error.
func (o *Ops) loadNotebook(ctx context.Context, id, role string) (notebookRow, error) {
	f, err := o.c.Folder(ctx, id)
	if err != nil {
		return notebookRow{}, missing(err, role, id)
	}
	return notebookRow{apiFolder: apiFolder{ID: f.ID, ParentID: f.ParentID, Title: f.Title, DeletedTime: f.DeletedTime},
		CreatedTime: f.CreatedTime, UpdatedTime: f.UpdatedTime}, nil
}

// allFolders lists every notebook, trashed ones included: GET /folders
// hides trashed notebooks, a folder title search for "*" does not.
func (o *Ops) allFolders(ctx context.Context) ([]apiFolder, error) {
	return joplin.ListAll[apiFolder](ctx, o.c, "/search", url.Values{
		"type": {"folder"}, "query": {"*"}, "fields": {"id,parent_id,title,deleted_time"},
	}, MaxNotebooks)
}

// subtree returns every notebook below root in all, root excluded, parents
// before children. It never loops on corrupt cycles.
func subtree(all []apiFolder, root string) []apiFolder {
	children := map[string][]apiFolder{}
	for _, f := range all {
		children[f.ParentID] = append(children[f.ParentID], f)
	}
	seen := map[string]bool{root: true}
	var out []apiFolder
	for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c)
				queue = append(queue, c.ID)
			}
		}
	}
	return out
}

// checkParent verifies in all that notebook id can hold children: it
// exists and is not in the trash.
func checkParent(all []apiFolder, id string) error {
	i := slices.IndexFunc(all, func(f apiFolder) bool { return f.ID == id })
	if i < 0 {
		return notFound("parent", id)
	}
	if all[i].DeletedTime > 0 {
		return domainerr.New(domainerr.InvalidArgument, "parent notebook %s is in the trash; restore it first", id).
			WithDetails(map[string]any{"parent_id": id, "restore_tool": "restore_notebook"})
	}
	return nil
}

// storedFolderTitle returns the title as Joplin will store it (leading
// slashes stripped), refusing blank and reserved titles Joplin would reject
// or mangle.
func storedFolderTitle(title string) (string, error) {
	t := strings.TrimLeft(title, `/\`)
	if NormalizeTitle(t) == "" {
		return "", domainerr.New(domainerr.InvalidArgument, "the title is blank")
	}
	if t == "Conflicts" { // Joplin's own conflicts notebook
		return "", domainerr.New(domainerr.InvalidArgument, "the title Conflicts is reserved by Joplin")
	}
	return t, nil
}

// siblingMatches lists the notebooks under parent whose normalized title is
// title's, trashed ones included, except the notebook self.
func siblingMatches(all []apiFolder, parent, title, self string) []match {
	want := NormalizeTitle(title)
	var out []match
	for _, f := range all {
		if f.ID != self && f.ParentID == parent && NormalizeTitle(f.Title) == want {
			out = append(out, match{ID: f.ID, Trashed: f.DeletedTime > 0})
		}
	}
	return out
}

func notebookExists(matches []match) error {
	return alreadyExists(domainerr.NotebookAlreadyExists, "notebook", "update_notebook", "restore_notebook", matches)
}

type notebookIDIn struct {
	ID string `json:"id" schema:"id"`
}

func (o *Ops) getNotebook() registry.Operation {
	return registry.Define(o.meta("get_notebook", "Read a notebook", "Read a notebook by id (trashed included) with its direct sub-notebooks.", registry.EffectRead), func(ctx context.Context, in notebookIDIn) (Notebook, error) {
		r, err := o.loadNotebook(ctx, in.ID, "notebook")
		if err != nil {
			return Notebook{}, err
		}
		all, err := o.allFolders(ctx)
		if err != nil {
			return Notebook{}, err
		}
		return r.toNotebook(all), nil
	})
}

type createNotebookIn struct {
	Title    string `json:"title" schema:"min=1,max=500"`
	ParentID string `json:"parent_id,omitempty" schema:"pattern=optional_id"`
}

func (o *Ops) createNotebook() registry.Operation {
	desc := "Create a notebook, top-level or under parent_id. A same-titled sibling (trashed included) fails with NOTEBOOK_ALREADY_EXISTS."
	return registry.Define(o.meta("create_notebook", "Create a notebook", desc, registry.EffectCreate), o.doCreateNotebook)
}

func (o *Ops) doCreateNotebook(ctx context.Context, in createNotebookIn) (Notebook, error) {
	title, err := storedFolderTitle(in.Title)
	if err != nil {
		return Notebook{}, err
	}
	unlock, err := o.lockCreates(ctx)
	if err != nil {
		return Notebook{}, err
	}
	defer unlock()

	all, err := o.allFolders(ctx)
	if err != nil {
		return Notebook{}, err
	}
	if in.ParentID != "" {
		if err := checkParent(all, in.ParentID); err != nil {
			return Notebook{}, err
		}
	}
	if matches := siblingMatches(all, in.ParentID, title, ""); len(matches) > 0 {
		return Notebook{}, notebookExists(matches)
	}
	id := joplin.NewID()
	req := map[string]any{"id": id, "title": title, "parent_id": in.ParentID}
	var created notebookRow
	if err := o.c.Write(ctx, "POST", "/folders", nil, req, &created); err != nil {
		load := func(ctx context.Context) (notebookRow, error) { return o.loadNotebook(ctx, id, "notebook") }
		if created, err = confirmCreate(ctx, err, id, load, func(r notebookRow) bool {
			return r.Title == title && r.ParentID == in.ParentID && r.DeletedTime == 0
		}); err != nil {
			return Notebook{}, err
		}
	}
	return created.toNotebook(nil), nil
}

type updateNotebookIn struct {
	ID       string  `json:"id" schema:"id"`
	Title    *string `json:"title,omitempty" schema:"min=1,max=500"`
	ParentID *string `json:"parent_id,omitempty" jsonschema:"Empty: top level." schema:"pattern=optional_id"`
}

func (o *Ops) updateNotebook() registry.Operation {
	desc := "Rename and/or move a notebook. Refuses a move into its own subtree and a title a sibling has (NOTEBOOK_ALREADY_EXISTS, trashed included)."
	return registry.Define(o.meta("update_notebook", "Rename or move a notebook", desc, registry.EffectUpdate), o.doUpdateNotebook)
}

func (o *Ops) doUpdateNotebook(ctx context.Context, in updateNotebookIn) (Notebook, error) {
	if in.Title == nil && in.ParentID == nil {
		return Notebook{}, domainerr.New(domainerr.InvalidArgument, "give title, parent_id or both")
	}
	unlock, err := o.lockCreates(ctx)
	if err != nil {
		return Notebook{}, err
	}
	defer unlock()

	cur, err := o.loadNotebook(ctx, in.ID, "notebook")
	if err != nil {
		return Notebook{}, err
	}
	req := map[string]any{}
	title, parent := cur.Title, cur.ParentID
	if in.Title != nil {
		if title, err = storedFolderTitle(*in.Title); err != nil {
			return Notebook{}, err
		}
		req["title"] = title
	}
	all, err := o.allFolders(ctx)
	if err != nil {
		return Notebook{}, err
	}
	if in.ParentID != nil {
		parent = *in.ParentID
		if err := checkMove(all, in.ID, parent); err != nil {
			return Notebook{}, err
		}
		req["parent_id"] = parent
	}
	identityChanged := NormalizeTitle(title) != NormalizeTitle(cur.Title) || parent != cur.ParentID
	if matches := siblingMatches(all, parent, title, in.ID); identityChanged && len(matches) > 0 {
		return Notebook{}, notebookExists(matches)
	}
	var updated notebookRow
	if err := o.c.Write(ctx, "PUT", "/folders/"+in.ID, nil, req, &updated); err != nil {
		return Notebook{}, withObjectID(err, in.ID)
	}
	return updated.toNotebook(all), nil
}

// checkMove refuses to move notebook id under parent when parent is the
// notebook itself, one of its descendants, missing or trashed.
func checkMove(all []apiFolder, id, parent string) error {
	if parent == "" {
		return nil
	}
	if parent == id {
		return domainerr.New(domainerr.InvalidArgument, "a notebook cannot be its own parent")
	}
	for _, d := range subtree(all, id) {
		if d.ID == parent {
			return domainerr.New(domainerr.InvalidArgument, "notebook %s is inside notebook %s; a notebook cannot move into its own sub-notebook", parent, id).
				WithDetails(map[string]any{"parent_id": parent})
		}
	}
	return checkParent(all, parent)
}

func (o *Ops) trashNotebook() registry.Operation {
	desc := "Move a notebook with its sub-notebooks and notes to the trash; restore_notebook brings them back."
	return registry.Define(o.meta("trash_notebook", "Move a notebook to the trash", desc, registry.EffectTrash), func(ctx context.Context, in notebookIDIn) (trashOut, error) {
		cur, err := o.loadNotebook(ctx, in.ID, "notebook")
		if err != nil {
			return trashOut{}, err
		}
		return o.moveToTrash(ctx, in.ID, "/folders/"+in.ID, cur.DeletedTime)
	})
}

// TrashBatchGap is how close in time trashed items must be to count as
// trashed in one go. Joplin stamps each notebook and each batch of notes of
// a cascading trash with its own clock reading, so those readings form a
// chain with small steps; an item trashed on its own earlier is separated
// from the chain by a larger step.
const TrashBatchGap int64 = 1000 // milliseconds

type restoreNotebookOut struct {
	ID                string `json:"id" schema:"id"`
	AlreadyRestored   bool   `json:"already_restored"`
	RestoredNotebooks int    `json:"restored_notebooks" schema:"min=0,max=@max_notebooks"`
	RestoredNotes     int    `json:"restored_notes" schema:"min=0,max=2147483648"`
	MovedToTopLevel   bool   `json:"moved_to_top_level"`
	LeftInTrash       int    `json:"left_in_trash" schema:"min=0,max=2147483648"`
}

func (o *Ops) restoreNotebook() registry.Operation {
	desc := "Restore a trashed notebook with the sub-notebooks and notes trashed along with it; items trashed earlier on their own stay (left_in_trash). With its parent still trashed it moves to the top level."
	return registry.Define(o.meta("restore_notebook", "Restore a notebook from the trash", desc, registry.EffectUpdate), o.doRestoreNotebook)
}

// trashedItem is a trashed notebook or note below the notebook to restore.
type trashedItem struct {
	id      string
	isNote  bool
	deleted int64
}

func (o *Ops) doRestoreNotebook(ctx context.Context, in notebookIDIn) (restoreNotebookOut, error) {
	root, err := o.loadNotebook(ctx, in.ID, "notebook")
	if err != nil {
		return restoreNotebookOut{}, err
	}
	res := restoreNotebookOut{ID: in.ID}
	if root.DeletedTime == 0 {
		res.AlreadyRestored = true
		return res, nil
	}
	all, err := o.allFolders(ctx)
	if err != nil {
		return restoreNotebookOut{}, err
	}
	notes, err := joplin.ListAll[joplin.Note](ctx, o.c, "/notes", url.Values{
		"fields": {"id,parent_id,deleted_time"}, "include_deleted": {"1"},
	}, o.limits.MaxScan)
	if err != nil {
		return restoreNotebookOut{}, err
	}
	together, left := trashedWith(root.apiFolder, all, notes)
	res.LeftInTrash = left

	final := map[string]any{"deleted_time": 0}
	if root.ParentID != "" && checkParent(all, root.ParentID) != nil {
		final["parent_id"] = ""
		res.MovedToTopLevel = true
	}
	// Descendants first, oldest trash time first, the notebook itself last:
	// after a failure the notebook is still trashed and the items not yet
	// restored still chain to its trash time, so calling again finishes.
	var doneIDs []string
	for _, it := range together {
		path := "/folders/"
		if it.isNote {
			path = "/notes/"
		}
		if err := o.c.Write(ctx, "PUT", path+it.id, nil, map[string]any{"deleted_time": 0}, nil); err != nil {
			return restoreNotebookOut{}, partialRestore(err, it.id, res, doneIDs)
		}
		doneIDs = append(doneIDs, it.id)
		if it.isNote {
			res.RestoredNotes++
		} else {
			res.RestoredNotebooks++
		}
	}
	if err := o.c.Write(ctx, "PUT", "/folders/"+in.ID, nil, final, nil); err != nil {
		return restoreNotebookOut{}, partialRestore(err, in.ID, res, doneIDs)
	}
	res.RestoredNotebooks++
	return res, nil
}

// trashedWith splits the trashed notebooks and notes below root into those
// trashed together with it, oldest first, and a count of the others. Walking
// down from root's trash time, an item belongs to the same trash operation
// while no step between consecutive trash times exceeds TrashBatchGap.
func trashedWith(root apiFolder, all []apiFolder, notes []joplin.Note) ([]trashedItem, int) {
	below := map[string]bool{root.ID: true}
	var items []trashedItem
	for _, f := range subtree(all, root.ID) {
		below[f.ID] = true
		if f.DeletedTime > 0 {
			items = append(items, trashedItem{id: f.ID, deleted: f.DeletedTime})
		}
	}
	for _, n := range notes {
		if below[n.ParentID] && n.DeletedTime > 0 {
			items = append(items, trashedItem{id: n.ID, isNote: true, deleted: n.DeletedTime})
		}
	}
	slices.SortFunc(items, func(a, b trashedItem) int {
		return cmp.Or(cmp.Compare(a.deleted, b.deleted), strings.Compare(a.id, b.id))
	})
	i := len(items)
	for i > 0 && items[i-1].deleted > root.DeletedTime {
		i-- // trashed after the notebook: on its own
	}
	end, cutoff := i, root.DeletedTime
	for i > 0 && cutoff-items[i-1].deleted <= TrashBatchGap {
		i--
		cutoff = items[i].deleted
	}
	return items[i:end], len(items) - (end - i)
}

// maxReportedIDs bounds the id list in a partial-restore error.
const maxReportedIDs = 200

// partialRestore reports a restore that failed at failedID after the items
// counted in done, with ids doneIDs, were restored. With nothing written yet
// it is the failure itself; otherwise a non-retryable error with the
// failure's code that says what was restored.
func partialRestore(err error, failedID string, done restoreNotebookOut, doneIDs []string) error {
	if done.RestoredNotebooks+done.RestoredNotes == 0 {
		return withObjectID(err, failedID)
	}
	de, ok := domainerr.As(err)
	if !ok {
		de = domainerr.New(domainerr.JoplinError, "Joplin failed")
	}
	return domainerr.New(de.Code, "restore stopped at %s after restoring %d sub-notebooks and %d notes (%s); "+
		"call restore_notebook again to restore the rest",
		failedID, done.RestoredNotebooks, done.RestoredNotes, de.Message).
		WithDetails(map[string]any{
			"failed_id": failedID, "restored_notebooks": done.RestoredNotebooks, "restored_notes": done.RestoredNotes,
			"restored_ids": doneIDs[:min(len(doneIDs), maxReportedIDs)], "restored_ids_complete": len(doneIDs) <= maxReportedIDs,
		})
}
