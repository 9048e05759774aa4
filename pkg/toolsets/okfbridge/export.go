package okfbridge

import (
	"context"
	"sort"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

type exportIn struct {
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
	NotebookID string `json:"notebook_id" schema:"id"`
	// Subnotebooks includes every notebook below, one bundle directory each.
	Subnotebooks bool `json:"subnotebooks,omitempty"`
}

type exportOut struct {
	BaseRevision   string   `json:"base_revision" schema:"max=80"`
	ResultRevision string   `json:"result_revision" schema:"max=80"`
	IdempotencyKey string   `json:"idempotency_key" schema:"max=64"`
	Notes          int      `json:"notes" schema:"min=0,max=50000"`
	Assets         int      `json:"assets" schema:"min=0,max=50000"`
	Changed        bool     `json:"changed"`
	Replayed       bool     `json:"replayed"`
	Created        []string `json:"created" schema:"max=50001,itemmax=4096"`
	Updated        []string `json:"updated" schema:"max=50001,itemmax=4096"`
}

func (o *Ops) exportNotebook() registry.Operation {
	desc := "Publish a Joplin notebook (and optionally its sub-notebooks) as an OKF v0.2 bundle: one concept per note, keyed by the note id, so a re-export updates in place and an unchanged notebook writes nothing. It owns the root index.md; deletes nothing."
	return registry.Define(o.meta("export_notebook_to_okf", "Export a notebook to OKF", desc, registry.EffectUpdate), o.export)
}

// files is a planned export: the bundle files by path, and the notes.
type exportPlan struct {
	files map[string][]byte
	notes int
}

func (o *Ops) export(ctx context.Context, in exportIn) (exportOut, error) {
	b, err := o.open(in.BundlePath)
	if err != nil {
		return exportOut{}, err
	}
	defer b.Close()
	p, err := o.planExport(ctx, in)
	if err != nil {
		return exportOut{}, err
	}
	paths := make([]string, 0, len(p.files))
	for path := range p.files {
		paths = append(paths, path)
	}
	sort.Slice(paths, func(i, j int) bool { return lastIndex(paths[i]) < lastIndex(paths[j]) })
	var digest strings.Builder
	changes := make([]store.FileChange, 0, len(paths))
	for _, path := range paths {
		digest.WriteString(path + "\x00" + store.SHA256Hex(p.files[path]) + "\n")
		changes = append(changes, store.FileChange{Path: path, Content: p.files[path]})
	}
	request := "sha256:" + store.SHA256Hex([]byte("export_notebook_to_okf\n"+in.NotebookID+"\n"+digest.String()))
	key := store.SHA256Hex([]byte("notebridge/okf/joplin-export/v1\n" + request))
	outc, err := o.newStore(b).Commit(ctx, store.Request{
		Kind: "export_notebook_to_okf", Key: key, ChangeID: request, Actor: Actor, RequestDigest: request,
		Files: changes,
		// A receipt replays only while the bundle still holds every file
		// of this export; otherwise the same export is written again.
		Replayable: func(store.Receipt) (bool, error) {
			for _, c := range changes {
				cur, err := store.HashFile(b.Root, c.Path, o.maxFileBytes())
				if err != nil || cur != store.SHA256Hex(c.Content) {
					return false, nil
				}
			}
			return true, nil
		},
	})
	if err != nil {
		return exportOut{}, bundle.PathErr(err)
	}
	r := outc.Receipt
	out := exportOut{
		BaseRevision: r.BaseRevision, ResultRevision: r.ResultRevision, IdempotencyKey: key,
		Notes: p.notes, Assets: len(p.files) - p.notes - 1, Replayed: outc.Replayed,
		Created: []string{}, Updated: []string{},
	}
	if outc.Replayed || outc.Noop {
		return out, nil
	}
	for _, f := range r.Files {
		out.Changed = true
		if f.BaseSHA == "" {
			out.Created = append(out.Created, f.Path)
		} else {
			out.Updated = append(out.Updated, f.Path)
		}
	}
	return out, nil
}

// lastIndex orders the root index.md after every other file, so the
// store publishes it last.
func lastIndex(path string) string {
	if path == "index.md" {
		return "\xff"
	}
	return path
}

// planExport reads the notebooks and renders every bundle file.
func (o *Ops) planExport(ctx context.Context, in exportIn) (exportPlan, error) {
	set, err := o.readNotebooks(ctx, in.NotebookID, in.Subnotebooks)
	if err != nil {
		return exportPlan{}, err
	}
	notes, err := o.readNotes(ctx, set)
	if err != nil {
		return exportPlan{}, err
	}
	targets := make(map[string]target, len(notes))
	for _, n := range notes {
		targets[n.ID] = target{concept: conceptPath(set.dirs[n.ParentID], n.ID)}
	}
	assets := map[string][]byte{}
	if err := o.resolveLinks(ctx, notes, targets, assets); err != nil {
		return exportPlan{}, err
	}
	files := make(map[string][]byte, len(notes)+len(assets)+1)
	index := make([]indexEntry, 0, len(notes))
	for _, n := range notes {
		path := targets[n.ID].concept
		files[path] = renderConcept(n, targets)
		index = append(index, indexEntry{path: path, title: n.Title})
	}
	for path, data := range assets {
		files[path] = data
	}
	files["index.md"] = renderIndex(set.root.Title, index)
	return exportPlan{files: files, notes: len(notes)}, nil
}

// conceptPath is the bundle file of a note: its notebook's directory and
// its Joplin id, so a renamed note keeps its concept.
func conceptPath(dir, id string) string {
	if dir == "" {
		return id + ".md"
	}
	return dir + "/" + id + ".md"
}
