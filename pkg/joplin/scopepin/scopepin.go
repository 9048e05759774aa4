// Package scopepin fixes a credential's notebook scope given by path
// ("Work/Clients") to the notebooks the path named when the credential was
// first configured with that setting, so that a rename cannot widen it: a
// caller that may rename its own notebook to the title another
// credential's path names would otherwise have that notebook resolved into
// the other credential's scope. The notebook ids are kept in the state
// directory (notebook-pins.json, 0600 in a 0700 directory), shared by
// every process on it under a file lock, and survive restarts. A path that
// no longer names exactly what it named is a mismatch: logged once and
// reported to the credential (joplin_status). Changing the setting pins it
// again; ids in a setting are kept as they are.
package scopepin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/schema"
	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
	"github.com/notebridge/notebridge/pkg/internal/filelock"
)

// FileName is the pins file in the state directory.
const FileName = "notebook-pins.json"

const fileVersion = 1

// lockWait bounds the wait for another process's lock on the file.
const lockWait = 10 * time.Second

// Pins is the pinned path scopes of one state directory. It is safe for
// concurrent use.
type Pins struct {
	path string
	log  *slog.Logger
	now  func() time.Time

	mu     sync.Mutex
	loaded bool
	file   pinFile
	// checked is the tree each record's mismatches were last computed in,
	// mismatches what they were (logged when they change).
	checked    map[string]*notebookscope.Tree
	mismatches map[string][]Mismatch
}

// pinFile is the file's content: one record per credential and setting.
type pinFile struct {
	Version int               `json:"version"`
	Pins    map[string]record `json:"pins"`
}

// record is what a setting's path refs named when it was pinned.
type record struct {
	Credential string              `json:"credential"`
	Setting    string              `json:"setting"`
	Refs       map[string][]string `json:"refs"` // path ref → notebook ids
	Pinned     time.Time           `json:"pinned"`
}

// Mismatch is a configured path that no longer names what it named: the
// credential still covers the notebooks it named then (Covers: their
// paths now; none when they are gone).
type Mismatch struct {
	Setting string   `json:"setting" schema:"max=65536"`
	Covers  []string `json:"covers" schema:"max=@max_notebooks,itemmax=65536"`
}

// Open returns the pins of stateDir; the file is read on first use.
func Open(stateDir string, log *slog.Logger) *Pins {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pins{path: filepath.Join(stateDir, FileName), log: log, now: time.Now,
		checked: map[string]*notebookscope.Tree{}, mismatches: map[string][]Mismatch{}}
}

var idRef = regexp.MustCompile(schema.IDPattern)

// paths returns the path refs of sc, sorted (ids left out).
func paths(sc notebookscope.Scope) []string {
	var out []string
	for _, r := range append(sc.Read.Refs(), sc.Write.Refs()...) {
		if !idRef.MatchString(r) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

func key(cred string, sc notebookscope.Scope) string { return cred + "\x00" + sc.Key() }

// Pin returns sc, the scope of ctx's caller, with every path replaced by
// the notebooks it named when the caller's credential was first seen with
// this setting; at that first time the paths are resolved in tree and
// recorded before anything is answered. A scope without paths is returned
// as it is.
func (p *Pins) Pin(ctx context.Context, sc notebookscope.Scope, tree *notebookscope.Tree) (notebookscope.Scope, error) {
	refs := paths(sc)
	if len(refs) == 0 {
		return sc, nil
	}
	who, _ := principal.From(ctx)
	cred := who.Credential()
	k := key(cred, sc)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.load(); err != nil {
		return notebookscope.Scope{}, err
	}
	rec, ok := p.file.Pins[k]
	if !ok {
		var err error
		if rec, err = p.record(ctx, k, cred, sc, refs, tree); err != nil {
			return notebookscope.Scope{}, err
		}
	}
	if p.checked[k] != tree {
		p.check(k, rec, tree)
	}
	return notebookscope.New(pinned(sc.Read, rec), pinned(sc.Write, rec)), nil
}

// pinned replaces the path refs of sel by their pinned ids.
func pinned(sel notebookscope.Selection, rec record) notebookscope.Selection {
	if sel.IsAll() {
		return sel
	}
	var out []string
	for _, r := range sel.Refs() {
		if ids, ok := rec.Refs[r]; ok {
			out = append(out, ids...)
		} else if idRef.MatchString(r) {
			out = append(out, r)
		}
	}
	return notebookscope.Only(out...)
}

// record pins sc's refs in tree and writes the file, under the file lock,
// keeping a record another process wrote meanwhile. The caller holds mu.
func (p *Pins) record(ctx context.Context, k, cred string, sc notebookscope.Scope, refs []string, tree *notebookscope.Tree) (record, error) {
	release, err := p.lock(ctx)
	if err != nil {
		return record{}, err
	}
	defer release()
	p.loaded = false
	if err := p.load(); err != nil {
		return record{}, err
	}
	if rec, ok := p.file.Pins[k]; ok {
		return rec, nil
	}
	rec := record{Credential: cred, Setting: strings.ReplaceAll(sc.Key(), "\x00", " | write: "), Refs: map[string][]string{}, Pinned: p.now().UTC()}
	for _, r := range refs {
		rec.Refs[r] = tree.Named(r)
	}
	p.file.Pins[k] = rec
	raw, err := json.Marshal(p.file)
	if err == nil {
		err = atomicfile.Write(p.path, raw, time.Time{})
	}
	if err != nil {
		delete(p.file.Pins, k)
		p.log.Error("cannot record the notebooks a path scope names", "file", p.path, "err", err)
		return record{}, domainerr.New(domainerr.Internal, "the notebooks this credential's notebook setting names could not be recorded in the state directory; see the log")
	}
	for _, r := range refs {
		p.log.Info("pinned a notebook path of a credential's scope to the notebooks it names now",
			"credential", cred, "path", r, "notebooks", tree.Paths(tree.Resolve(notebookscope.Only(rec.Refs[r]...))))
	}
	return rec, nil
}

// check recomputes the mismatches of record k in tree and logs those that
// are new. The caller holds mu.
func (p *Pins) check(k string, rec record, tree *notebookscope.Tree) {
	var out []Mismatch
	refs := make([]string, 0, len(rec.Refs))
	for r := range rec.Refs {
		refs = append(refs, r)
	}
	slices.Sort(refs)
	for _, r := range refs {
		ids := rec.Refs[r]
		named := tree.Named(r)
		if slices.Equal(named, ids) {
			continue
		}
		m := Mismatch{Setting: r, Covers: []string{}}
		for _, id := range ids {
			if tree.Has(id) {
				m.Covers = append(m.Covers, tree.PathOf(id))
			}
		}
		out = append(out, m)
		if !slices.ContainsFunc(p.mismatches[k], func(o Mismatch) bool { return o.Setting == r }) {
			p.log.Warn("a configured notebook path no longer names the notebooks it named; the credential still covers only those",
				"credential", rec.Credential, "path", r, "covers", m.Covers, "now_named", len(named),
				"fix", "name the notebooks by id, or change the setting to pin it again")
		}
	}
	p.checked[k], p.mismatches[k] = tree, out
}

// Mismatches returns the configured paths of sc, the scope of ctx's
// caller, that no longer name what they named (as of the last Pin).
func (p *Pins) Mismatches(ctx context.Context, sc notebookscope.Scope) []Mismatch {
	if len(paths(sc)) == 0 {
		return nil
	}
	who, _ := principal.From(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.mismatches[key(who.Credential(), sc)])
}

// load reads the file unless already read. A missing file is no pins; an
// unreadable one fails closed. The caller holds mu.
func (p *Pins) load() error {
	if p.loaded {
		return nil
	}
	p.file = pinFile{Version: fileVersion, Pins: map[string]record{}}
	raw, err := os.ReadFile(p.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return p.unreadable(err)
	default:
		var f pinFile
		if err := json.Unmarshal(raw, &f); err != nil || f.Version != fileVersion {
			return p.unreadable(fmt.Errorf("not a version-%d pins file", fileVersion))
		}
		for k, r := range f.Pins {
			p.file.Pins[k] = r
		}
	}
	p.loaded = true
	return nil
}

func (p *Pins) unreadable(err error) error {
	p.log.Error("the notebook pins file cannot be read; callers scoped by notebook path are refused until it can (move it away to pin every path again)",
		"file", p.path, "err", err)
	return domainerr.New(domainerr.Internal, "the notebooks this credential's notebook setting names cannot be read from the state directory; see the log")
}

// lock takes the file lock, creating the directory 0700.
func (p *Pins) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return nil, fmt.Errorf("notebook pins directory: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	release, err := filelock.Lock(ctx, p.path+".lock")
	if err != nil {
		return nil, fmt.Errorf("lock notebook pins: %w", err)
	}
	return release, nil
}
