package okfbridge

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

type importIn struct {
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
	// NotebookID receives new concepts whose directory holds no exported note.
	NotebookID string `json:"notebook_id" schema:"id"`
}

// noteChange is one item of preview_note_changes' changes, as that
// operation takes it.
type noteChange struct {
	Note   string  `json:"note" schema:"max=32"`
	Op     string  `json:"op" schema:"max=20"`
	Find   *string `json:"find,omitempty" schema:"max=1000000"`
	Text   *string `json:"text,omitempty" schema:"max=1000000"`
	Target *string `json:"target,omitempty" schema:"max=500"`
	Create *bool   `json:"create,omitempty"`
}

// newNote is a concept without a Joplin note: create_note's arguments
// and the tags to add once it exists.
type newNote struct {
	ConceptID  string   `json:"concept_id" schema:"max=4096"`
	NotebookID string   `json:"notebook_id" schema:"max=32"`
	Title      string   `json:"title" schema:"max=500"`
	Body       string   `json:"body" schema:"max=1000000"`
	Tags       []string `json:"tags" schema:"max=1000,itemmax=500"`
}

// conflict is a concept whose note changed in Joplin since the export:
// shown, never turned into a change.
type conflict struct {
	ConceptID string   `json:"concept_id" schema:"max=4096"`
	Note      string   `json:"note" schema:"max=32"`
	Fields    []string `json:"fields" schema:"max=3,itemmax=10"`
	Reason    string   `json:"reason" schema:"max=200"`
}

type missingNote struct {
	ConceptID string `json:"concept_id" schema:"max=4096"`
	Note      string `json:"note" schema:"max=32"`
}

type importOut struct {
	Revision  string        `json:"revision" schema:"max=80"`
	Changes   []noteChange  `json:"changes" schema:"max=100000"`
	Notes     []string      `json:"notes" jsonschema:"The notes the changes touch, in order." schema:"max=50000,itemmax=32"`
	NewNotes  []newNote     `json:"new_notes" schema:"max=50000"`
	Conflicts []conflict    `json:"conflicts" schema:"max=50000"`
	Missing   []missingNote `json:"missing" jsonschema:"Concepts whose note is gone or out of the caller's scope; nothing is done for them." schema:"max=50000"`
	Unchanged int           `json:"unchanged" schema:"min=0,max=50000"`
}

func (o *Ops) previewImport() registry.Operation {
	desc := "Compare an exported bundle with its notes; writes nothing. Returns changes (titles, bodies, tags) for preview_note_changes and apply_note_changes, new concepts as create_note arguments, and conflicts (notes changed since the export), never overwritten."
	return registry.Define(o.meta("preview_okf_to_notebook", "Preview an OKF bundle back into Joplin", desc, registry.EffectRead), o.importPreview)
}

type exported struct {
	id, noteID, updated, title string
	tags                       []string
	body                       string
}

func (o *Ops) importPreview(ctx context.Context, in importIn) (importOut, error) {
	var out importOut
	b, err := o.open(in.BundlePath)
	if err != nil {
		return out, err
	}
	defer b.Close()
	// The notebook for new notes must be readable to the caller.
	var root folder
	if err := o.jop.Get(ctx, "/folders/"+in.NotebookID, url.Values{"fields": {"id"}}, &root); err != nil {
		return out, fmt.Errorf("read notebook: %w", err)
	}
	concepts, rev, err := o.readBundle(ctx, b)
	if err != nil {
		return out, err
	}
	out = importOut{Revision: rev, Changes: []noteChange{}, Notes: []string{}, NewNotes: []newNote{}, Conflicts: []conflict{}, Missing: []missingNote{}}
	dirNotebook := map[string]string{}
	for _, c := range concepts {
		if c.noteID == "" {
			continue
		}
		n, tags, err := o.readNote(ctx, c.noteID)
		if domainerr.HasCode(err, domainerr.NotFound) || err == nil && n.DeletedTime != 0 {
			out.Missing = append(out.Missing, missingNote{ConceptID: c.id, Note: c.noteID})
			continue
		}
		if err != nil {
			return out, err
		}
		dirNotebook[path.Dir(c.id)] = n.ParentID
		changes, fields := diffNote(c, n, tags)
		switch {
		case len(fields) == 0:
			out.Unchanged++
		case fmt.Sprint(n.UpdatedTime) != c.updated:
			out.Conflicts = append(out.Conflicts, conflict{ConceptID: c.id, Note: c.noteID, Fields: fields,
				Reason: "the note changed in Joplin since the export; export again or edit the note"})
		default:
			out.Changes = append(out.Changes, changes...)
			out.Notes = append(out.Notes, c.noteID)
		}
	}
	for _, c := range concepts {
		if c.noteID != "" {
			continue
		}
		nb := dirNotebook[path.Dir(c.id)]
		if nb == "" {
			nb = in.NotebookID
		}
		title := c.title
		if strings.TrimSpace(title) == "" {
			title = path.Base(c.id)
		}
		out.NewNotes = append(out.NewNotes, newNote{ConceptID: c.id, NotebookID: nb, Title: title,
			Body: reverseBody(c.body), Tags: append([]string{}, c.tags...)})
	}
	return out, nil
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// readBundle reads every concept under the shared lease, with the revision
// it was read at.
func (o *Ops) readBundle(ctx context.Context, b *bundle.Bundle) ([]exported, string, error) {
	lease, err := store.LockShared(ctx, b.Root)
	if err != nil {
		return nil, "", bundle.PathErr(err)
	}
	defer lease.Release()
	files, err := b.Files(ctx)
	if err != nil {
		return nil, "", err
	}
	var out []exported
	for _, f := range files {
		if f.ID == "" {
			continue
		}
		d, raw, err := b.ReadConcept(f.ID)
		if err != nil {
			if raw != nil {
				continue // a malformed concept is not imported
			}
			return nil, "", err
		}
		p := d.Project()
		c := exported{id: f.ID, title: p.Title, tags: p.Tags, body: string(d.Body())}
		if n := d.Lookup("joplin_id"); n != nil && hexID.MatchString(n.Value) {
			c.noteID = n.Value
			if u := d.Lookup("joplin_updated_time"); u != nil {
				c.updated = u.Value
			}
		}
		out = append(out, c)
	}
	m, err := store.SnapshotIn(b.Root, store.Limits{MaxFiles: o.cfg.Limits.MaxFiles, MaxFileBytes: o.cfg.Limits.MaxFileBytes, MaxDepth: o.cfg.Limits.MaxDepth}, b.Cache)
	if err != nil {
		return nil, "", bundle.PathErr(err)
	}
	return out, m.Revision, nil
}

func (o *Ops) readNote(ctx context.Context, id string) (note, []string, error) {
	var n note
	if err := o.jop.Get(ctx, "/notes/"+id, url.Values{"fields": {"id,parent_id,title,body,updated_time,deleted_time"}}, &n); err != nil {
		return note{}, nil, fmt.Errorf("read note: %w", err)
	}
	rows, err := joplin.ListAll[tagRow](ctx, o.jop, "/notes/"+id+"/tags", url.Values{"fields": {"id,title"}}, maxNotes)
	if err != nil {
		return note{}, nil, fmt.Errorf("read note tags: %w", err)
	}
	tags := make([]string, len(rows))
	for i, t := range rows {
		tags[i] = t.Title
	}
	return n, tags, nil
}

// diffNote returns the changes that bring note n to concept c, and the
// fields that differ.
func diffNote(c exported, n note, tags []string) ([]noteChange, []string) {
	var changes []noteChange
	var fields []string
	title := n.Title
	if strings.TrimSpace(title) == "" {
		title = "Untitled"
	}
	if c.title != "" && c.title != title {
		fields = append(fields, "title")
		t := c.title
		changes = append(changes, noteChange{Note: n.ID, Op: "title", Text: &t})
	}
	if body := reverseBody(c.body); body != n.Body {
		fields = append(fields, "body")
		switch {
		case n.Body == "":
			changes = append(changes, noteChange{Note: n.ID, Op: "append", Text: &body})
		default:
			find := n.Body
			changes = append(changes, noteChange{Note: n.ID, Op: "replace", Find: &find, Text: &body})
		}
	}
	have := map[string]string{}
	for _, t := range tags {
		have[joplinops.NormalizeTitle(t)] = t
	}
	want := map[string]string{}
	for _, t := range c.tags {
		want[joplinops.NormalizeTitle(t)] = t
	}
	var tagChanges []noteChange
	yes := true
	for k, t := range want {
		if _, ok := have[k]; !ok && k != "" {
			t := t
			tagChanges = append(tagChanges, noteChange{Note: n.ID, Op: "tag", Target: &t, Create: &yes})
		}
	}
	for k, t := range have {
		if _, ok := want[k]; !ok {
			t := t
			tagChanges = append(tagChanges, noteChange{Note: n.ID, Op: "untag", Target: &t})
		}
	}
	sort.Slice(tagChanges, func(i, j int) bool {
		if tagChanges[i].Op != tagChanges[j].Op {
			return tagChanges[i].Op < tagChanges[j].Op
		}
		return *tagChanges[i].Target < *tagChanges[j].Target
	})
	if len(tagChanges) > 0 {
		fields = append(fields, "tags")
		changes = append(changes, tagChanges...)
	}
	return changes, fields
}
