package notebookscope

import (
	"sort"
	"strings"
)

// Folder is one notebook of the tree, trashed ones included.
type Folder struct {
	ID, ParentID, Title string
	Trashed             bool
}

// Tree is Joplin's notebook tree at one moment. It is immutable.
type Tree struct {
	byID     map[string]Folder
	children map[string][]string // parent id ("" for the top) → child ids
}

// NewTree builds a tree of folders.
func NewTree(folders []Folder) *Tree {
	t := &Tree{byID: make(map[string]Folder, len(folders)), children: map[string][]string{}}
	for _, f := range folders {
		t.byID[f.ID] = f
	}
	for _, f := range folders {
		parent := f.ParentID
		if _, ok := t.byID[parent]; !ok {
			parent = ""
		}
		t.children[parent] = append(t.children[parent], f.ID)
	}
	return t
}

// Children returns the notebooks directly below id ("" for the top),
// sorted by title.
func (t *Tree) Children(id string) []Folder {
	out := make([]Folder, 0, len(t.children[id]))
	for _, c := range t.children[id] {
		out = append(out, t.byID[c])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Title < out[j].Title })
	return out
}

// PathOf spells notebook id's titles from the top, joined by "/".
func (t *Tree) PathOf(id string) string { return t.path(id) }

// Has reports whether the tree holds notebook id.
func (t *Tree) Has(id string) bool { _, ok := t.byID[id]; return ok }

// Folder returns notebook id.
func (t *Tree) Folder(id string) (Folder, bool) { f, ok := t.byID[id]; return f, ok }

// Set is the notebook ids a selection covers in one tree.
type Set struct {
	all bool
	ids map[string]bool
}

// Has reports whether the set covers notebook id. A note's notebook id is
// never "" in Joplin; "" (the top of the tree) is covered by All only.
func (s Set) Has(id string) bool { return s.all || s.ids[id] }

// IsAll reports whether the set covers every notebook.
func (s Set) IsAll() bool { return s.all }

// Empty reports whether the set covers no notebook.
func (s Set) Empty() bool { return !s.all && len(s.ids) == 0 }

// IDs returns the covered ids, sorted (nil for All).
func (s Set) IDs() []string {
	out := make([]string, 0, len(s.ids))
	for id := range s.ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Intersect returns the ids both sets cover.
func (s Set) Intersect(o Set) Set {
	switch {
	case s.all:
		return o
	case o.all:
		return s
	}
	out := Set{ids: map[string]bool{}}
	for id := range s.ids {
		if o.ids[id] {
			out.ids[id] = true
		}
	}
	return out
}

// Resolve returns the notebooks sel covers now: each named notebook and
// everything below it. A ref that is the id of a notebook names it; any
// other ref is a path of titles from the top, and names every notebook
// along which the titles match exactly. A ref naming nothing covers
// nothing.
func (t *Tree) Resolve(sel Selection) Set {
	if sel.all {
		return Set{all: true}
	}
	out := Set{ids: map[string]bool{}}
	for _, ref := range sel.refs {
		roots := t.byPath(ref)
		if _, ok := t.byID[ref]; ok {
			roots = append(roots, ref)
		}
		for _, r := range roots {
			t.addSubtree(out.ids, r)
		}
	}
	return out
}

// Named returns the notebooks ref names now, as Resolve reads it (without
// the notebooks below them): the notebook of that id, and every notebook
// whose titles from the top spell it. Sorted.
func (t *Tree) Named(ref string) []string {
	roots := t.byPath(ref)
	if _, ok := t.byID[ref]; ok {
		roots = append(roots, ref)
	}
	sort.Strings(roots)
	return roots
}

// byPath returns the notebooks whose titles from the top spell path.
func (t *Tree) byPath(path string) []string {
	level := []string{""}
	for _, title := range strings.Split(path, "/") {
		title = strings.TrimSpace(title)
		var next []string
		for _, parent := range level {
			for _, id := range t.children[parent] {
				if t.byID[id].Title == title {
					next = append(next, id)
				}
			}
		}
		if len(next) == 0 {
			return nil
		}
		level = next
	}
	return level
}

// addSubtree adds root and everything below it to ids; it never loops on
// a corrupt cycle.
func (t *Tree) addSubtree(ids map[string]bool, root string) {
	stack := []string{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if ids[id] {
			continue
		}
		ids[id] = true
		stack = append(stack, t.children[id]...)
	}
}

// Paths returns the path of titles of each notebook in ids that has no
// ancestor in ids: how a person would name the set. Sorted.
func (t *Tree) Paths(s Set) []string {
	if s.all {
		return nil
	}
	var out []string
	for id := range s.ids {
		f, ok := t.byID[id]
		if !ok || s.ids[f.ParentID] {
			continue
		}
		out = append(out, t.path(id))
	}
	sort.Strings(out)
	return out
}

// path spells notebook id's titles from the top.
func (t *Tree) path(id string) string {
	var parts []string
	seen := map[string]bool{}
	for f, ok := t.byID[id]; ok && !seen[f.ID]; f, ok = t.byID[f.ParentID] {
		seen[f.ID] = true
		parts = append([]string{f.Title}, parts...)
	}
	return strings.Join(parts, "/")
}
