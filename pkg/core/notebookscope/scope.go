// Package notebookscope says which Joplin notebooks a caller may read and
// write: a Scope names notebooks by id or by path ("Work/Clients"), and a
// Tree resolves it, at call time, to the notebook ids it covers: the named
// notebooks and every notebook below them, including ones created later.
// It decides nothing about requests: pkg/joplin/scopeview enforces it.
package notebookscope

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Selection is a set of notebooks: every notebook, or the ones named by
// Refs (ids or paths) with their sub-notebooks. The zero Selection is no
// notebook at all.
type Selection struct {
	all  bool
	refs []string
}

// All selects every notebook.
func All() Selection { return Selection{all: true} }

// Only selects the notebooks refs name (ids or paths) and their
// sub-notebooks. Repeated and blank refs collapse.
func Only(refs ...string) Selection {
	var out []string
	for _, r := range refs {
		r = strings.TrimSpace(r)
		if r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return Selection{refs: out}
}

// IsAll reports whether the selection covers every notebook.
func (s Selection) IsAll() bool { return s.all }

// Refs returns the notebooks the selection names (nil for All).
func (s Selection) Refs() []string { return slices.Clone(s.refs) }

// Empty reports whether the selection covers no notebook.
func (s Selection) Empty() bool { return !s.all && len(s.refs) == 0 }

// String renders the selection as a setting: "*" for All, else the refs
// joined by commas.
func (s Selection) String() string {
	if s.all {
		return "*"
	}
	return strings.Join(s.refs, ",")
}

// Scope is what one caller may see and change. Writes are limited to
// notebooks Read covers too: a Tree resolves Write within Read.
type Scope struct {
	Read, Write Selection
}

// Everything is the unlimited scope: read and write every notebook.
func Everything() Scope { return Scope{Read: All(), Write: All()} }

// New builds a scope reading read and writing write. A write selection
// naming notebooks outside read is kept as named; resolving it
// (joplin/scopeview) keeps only the notebooks both cover.
func New(read, write Selection) Scope { return Scope{Read: read, Write: write} }

// Unlimited reports whether the scope reads and writes every notebook.
func (s Scope) Unlimited() bool { return s.Read.all && s.Write.all }

// Key identifies the scope's selections, for caches.
func (s Scope) Key() string { return s.Read.String() + "\x00" + s.Write.String() }

// ErrBadSetting is returned for a notebook setting that names nothing.
var ErrBadSetting = errors.New("notebookscope: bad notebook setting")

// ParseSelection reads a notebook setting: "*" (or "all") for every
// notebook, else notebooks separated by commas, each a 32-hex id or a path
// of titles separated by "/" (a title that itself contains "/" must be
// named by id). An empty setting is refused.
func ParseSelection(setting string) (Selection, error) {
	setting = strings.TrimSpace(setting)
	if setting == "*" || strings.EqualFold(setting, "all") {
		return All(), nil
	}
	sel := Only(strings.Split(setting, ",")...)
	if sel.Empty() {
		return Selection{}, fmt.Errorf("%w: name notebooks by id or path, or * for all", ErrBadSetting)
	}
	for _, r := range sel.refs {
		if r == "*" {
			return Selection{}, fmt.Errorf("%w: * stands alone", ErrBadSetting)
		}
		for _, part := range strings.Split(r, "/") {
			if strings.TrimSpace(part) == "" {
				return Selection{}, fmt.Errorf("%w: %q has an empty path element", ErrBadSetting, r)
			}
		}
	}
	return sel, nil
}

// Parse reads a read setting and an optional write setting (empty: writes
// as wide as reads).
func Parse(read, write string) (Scope, error) {
	r, err := ParseSelection(read)
	if err != nil {
		return Scope{}, err
	}
	if strings.TrimSpace(write) == "" {
		return New(r, r), nil
	}
	w, err := ParseSelection(write)
	if err != nil {
		return Scope{}, err
	}
	return New(r, w), nil
}
