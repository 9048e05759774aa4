// Package scopeview enforces notebook scopes on the Joplin client: a View
// installed on the client (joplin.View) sees every request an operation
// makes, refuses the ones about objects outside the caller's notebooks
// (answering exactly as Joplin does for a missing object) and removes such
// objects from every answer. The caller is the principal the executor puts
// in the context; notebridge's own work (the search index, the identity
// guard, sync status) carries principal.System and sees everything, as an
// unlimited caller does. A context carrying no principal at all is refused
// (UNAUTHENTICATED): the notebook layer fails closed as the executor does.
//
// A scope given by path is read as the notebooks the path named when its
// credential was configured, when pins are set (SetPins, scopepin).
//
// Visibility: a note is visible when its notebook is in the read scope; a
// notebook when it is; a tag when it is on a visible note, on no note, or
// claimed by the caller's scope (Claim); a resource when a visible note
// links to it. Membership is resolved at
// call time from the notebook tree, cached until a write or a sync changes
// a notebook.
package scopeview

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/scopepin"
)

// maxFolders bounds the tree the view reads.
const maxFolders = 10_000

// reloadAfter is how old a cached tree must be before an unknown notebook
// id (one a sync made) makes the view read the tree again.
const reloadAfter = time.Second

// View is the notebook-scope joplin.View. It is safe for concurrent use.
type View struct {
	c       *joplin.Client
	maxScan int
	now     func() time.Time
	// generation, when set, counts completed syncs: a sync may have
	// changed the tree.
	generation func() (int64, bool)

	// pins, when set, fixes path scopes to the notebooks they first named.
	pins *scopepin.Pins

	mu       sync.Mutex
	tree     *notebookscope.Tree // nil: read it again
	loadedAt time.Time
	gen      int64           // the sync generation the tree was read at
	resolved map[string]sets // scope key → its sets in tree
	// claims holds, by scope key, the tags a caller of that scope created
	// by reusing one it could not see, with the title it gave (Claim);
	// claimsPath, when set, keeps them across restarts (KeepClaimsIn).
	claims     map[string]map[string]string
	claimsPath string
}

// sets is one scope resolved in one tree.
type sets struct{ read, write notebookscope.Set }

// Install builds a View for c, installs it and has it observe c's writes;
// what it serves and writes is named to the call's activity log.
// maxScan bounds the notes read to find the notes linking a resource;
// generation, when not nil, counts completed syncs (syncstate), and the
// tree is read again after each.
func Install(c *joplin.Client, maxScan int, generation func() (int64, bool)) *View {
	v := &View{c: c, maxScan: maxScan, now: time.Now, generation: generation}
	c.SetView(recorder{v}) // record.go
	c.Observe(v.observe)
	c.Observe(recordWrite)
	return v
}

// SetPins has the view read every scope given by path as the notebooks
// the path named when its credential was configured (scopepin); call it
// before the client is used.
func (v *View) SetPins(p *scopepin.Pins) { v.pins = p }

// observe drops the cached tree after a notebook write.
func (v *View) observe(_ context.Context, w joplin.Write) {
	if w.Kind == joplin.NotebookSaved || w.Kind == joplin.NotebookTrashed {
		v.Invalidate()
	}
}

// Invalidate drops the cached tree: the next scoped request reads it
// again. The search index calls it when a sync changed notebooks.
func (v *View) Invalidate() {
	v.mu.Lock()
	v.tree, v.resolved = nil, nil
	v.mu.Unlock()
}

// noCaller is the refusal of a Joplin request whose context carries no
// principal: no agent caller and not notebridge's own work (System).
func noCaller() error {
	return domainerr.New(domainerr.Unauthenticated, "this Joplin request carries no caller, so notebridge refuses it")
}

// scopeOf returns the notebook scope of ctx's caller; limited is false for
// an unlimited caller and for notebridge's own work (principal.System). A
// context without a principal is refused (noCaller).
func scopeOf(ctx context.Context) (sc notebookscope.Scope, limited bool, err error) {
	p, ok := principal.From(ctx)
	if !ok {
		return notebookscope.Scope{}, true, noCaller()
	}
	sc = p.Notebooks()
	return sc, !sc.Unlimited(), nil
}

// Limited reports whether ctx's caller is limited to some notebooks; a
// context without a principal counts as limited (it is refused).
func Limited(ctx context.Context) bool {
	_, limited, _ := scopeOf(ctx)
	return limited
}

// resolve returns sc's notebook sets in the current tree.
func (v *View) resolve(ctx context.Context, sc notebookscope.Scope) (sets, *notebookscope.Tree, error) {
	gen := v.syncGeneration()
	v.mu.Lock()
	if v.tree != nil && v.gen != gen {
		v.tree, v.resolved = nil, nil
	}
	tree := v.tree
	v.mu.Unlock()
	if tree == nil {
		t, err := v.load(ctx)
		if err != nil {
			return sets{}, nil, err
		}
		tree = t
	}
	if v.pins != nil {
		pinned, err := v.pins.Pin(ctx, sc, tree)
		if err != nil {
			return sets{}, nil, err
		}
		sc = pinned
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.resolved[sc.Key()]; ok && v.tree == tree {
		return s, tree, nil
	}
	s := sets{read: tree.Resolve(sc.Read)}
	s.write = s.read.Intersect(tree.Resolve(sc.Write))
	if v.tree == tree {
		if v.resolved == nil {
			v.resolved = map[string]sets{}
		}
		v.resolved[sc.Key()] = s
	}
	return s, tree, nil
}

// load reads the notebook tree, trashed notebooks included.
func (v *View) load(ctx context.Context) (*notebookscope.Tree, error) {
	type folder struct {
		ID          string `json:"id"`
		ParentID    string `json:"parent_id"`
		Title       string `json:"title"`
		DeletedTime int64  `json:"deleted_time"`
	}
	all, err := joplin.ListAll[folder](joplin.WholeJoplin(ctx), v.c, "/search", url.Values{
		"type": {"folder"}, "query": {"*"}, "fields": {"id,parent_id,title,deleted_time"},
	}, maxFolders)
	if err != nil {
		return nil, err
	}
	folders := make([]notebookscope.Folder, len(all))
	for i, f := range all {
		folders[i] = notebookscope.Folder{ID: f.ID, ParentID: f.ParentID, Title: f.Title, Trashed: f.DeletedTime > 0}
	}
	t := notebookscope.NewTree(folders)
	gen := v.syncGeneration()
	v.mu.Lock()
	v.tree, v.resolved, v.loadedAt, v.gen = t, nil, v.now(), gen
	v.mu.Unlock()
	return t, nil
}

// syncGeneration is the count of completed syncs (0 when unknown).
func (v *View) syncGeneration() int64 {
	if v.generation == nil {
		return 0
	}
	n, _ := v.generation()
	return n
}

// reloadFor reads the tree again when it lacks notebook id and is old
// enough: a sync may have made the notebook since.
func (v *View) reloadFor(ctx context.Context, sc notebookscope.Scope, tree *notebookscope.Tree, id string) (sets, bool, error) {
	if id == "" || tree.Has(id) {
		return sets{}, false, nil
	}
	v.mu.Lock()
	stale := v.tree == tree && v.now().Sub(v.loadedAt) >= reloadAfter
	if stale {
		v.tree, v.resolved = nil, nil
	}
	v.mu.Unlock()
	if !stale {
		return sets{}, false, nil
	}
	s, _, err := v.resolve(ctx, sc)
	return s, true, err
}

// MayCreateShared refuses, before any lookup, a caller that may write no
// notebook at all: the NOTEBOOK_NOT_WRITABLE Admit gives its POST /tags, so
// that whether a title is taken outside its scope never shows.
func (v *View) MayCreateShared(ctx context.Context) error {
	sc, limited, err := scopeOf(ctx)
	if err != nil || !limited {
		return err
	}
	s, _, err := v.resolve(ctx, sc)
	if err != nil {
		return err
	}
	if s.write.Empty() {
		return notWritable()
	}
	return nil
}

// Tree returns the whole notebook tree, trashed notebooks included: what
// the owner chooses from on the consent page.
func (v *View) Tree(ctx context.Context) (*notebookscope.Tree, error) {
	_, tree, err := v.resolve(ctx, notebookscope.Everything())
	return tree, err
}

// Scope is what a caller sees of the notebook tree: Readable and Writable
// are the notebook ids (nil for every notebook), and ReadPaths and
// WritePaths name the top of each visible branch.
type Scope struct {
	All                   bool
	Readable, Writable    notebookscope.Set
	ReadPaths, WritePaths []string
	// Mismatches are the configured paths that no longer name the
	// notebooks they named (with pins set).
	Mismatches []scopepin.Mismatch
}

// Of resolves the scope of ctx's caller now. An unlimited caller gets
// All.
func (v *View) Of(ctx context.Context) (Scope, error) {
	sc, limited, err := scopeOf(ctx)
	if err != nil {
		return Scope{}, err
	}
	if !limited {
		return Scope{All: true}, nil
	}
	s, tree, err := v.resolve(ctx, sc)
	if err != nil {
		return Scope{}, err
	}
	out := Scope{Readable: s.read, Writable: s.write, ReadPaths: tree.Paths(s.read), WritePaths: tree.Paths(s.write)}
	if v.pins != nil {
		out.Mismatches = v.pins.Mismatches(ctx, sc)
	}
	return out, nil
}

// Admit implements joplin.View.
// /ping reveals nothing and passes for every context.
func (v *View) Admit(ctx context.Context, r *joplin.Request) error {
	parts := strings.Split(strings.Trim(r.Path, "/"), "/")
	if parts[0] == "ping" {
		return nil
	}
	sc, limited, err := scopeOf(ctx)
	if err != nil || !limited {
		return err
	}
	s, tree, err := v.resolve(ctx, sc)
	if err != nil {
		return err
	}
	c := call{v: v, ctx: ctx, sc: sc, s: s, tree: tree, r: r, parts: parts}
	return c.admit()
}

// Narrow implements joplin.View.
func (v *View) Narrow(ctx context.Context, r joplin.Request, answer []byte) ([]byte, error) {
	parts := strings.Split(strings.Trim(r.Path, "/"), "/")
	if parts[0] == "ping" {
		return answer, nil
	}
	sc, limited, err := scopeOf(ctx)
	if err != nil {
		return nil, err
	}
	if !limited {
		return answer, nil
	}
	s, tree, err := v.resolve(ctx, sc)
	if err != nil {
		return nil, err
	}
	c := call{v: v, ctx: ctx, sc: sc, s: s, tree: tree, r: &r, parts: parts}
	return c.narrow(answer)
}

// notWritable is the refusal of a change outside the write scope. It names
// nothing, so it says nothing of what lies outside.
func notWritable() error {
	return domainerr.New(domainerr.NotebookNotWritable, "this credential may not make this change: it is outside the notebooks it may write")
}

// sharedNotWritable is the refusal of a change to an object every notebook
// shares (a tag's title, a resource) by a caller that does not write every
// notebook.
func sharedNotWritable(kind string) error {
	return domainerr.New(domainerr.NotebookNotWritable, "this credential may not change or delete a %s: %ss are shared by every notebook, and it does not write them all", kind, kind)
}
