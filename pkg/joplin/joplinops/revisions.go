package joplinops

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"slices"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/edits"
	"github.com/notebridge/notebridge/pkg/joplin/notechanges"
	"github.com/notebridge/notebridge/pkg/joplin/revision"
)

// Joplin's revisions come from the person's desktop and phone apps by
// sync (the CLI server makes none). GET /revisions cannot be filtered by
// note, so a note's revisions are found by scanning the list's light
// fields; only the chain a reconstruction needs is read in full.

// maxRevisionChain bounds the revisions one reconstruction reads.
const maxRevisionChain = 1000

// revisionListFields are the fields a scan of all revisions reads.
const revisionListFields = "id,parent_id,item_type,item_id,item_updated_time,encryption_applied,created_time"

// NoteRevision is one revision of a note, as listed.
type NoteRevision struct {
	ID string `json:"id" schema:"id"`
	// NoteUpdatedTime is when the note was saved in the state the revision
	// records (Unix ms).
	NoteUpdatedTime int64 `json:"note_updated_time" schema:"min=0,max=9007199254740992"`
	CreatedTime     int64 `json:"created_time" schema:"min=0,max=9007199254740992"`
	Encrypted       bool  `json:"encrypted,omitempty"`
}

type listRevisionsIn struct {
	NoteID string `json:"note_id" schema:"id"`
	Limit  int    `json:"limit,omitempty" schema:"min=1,max=500,default=50"`
}

type listRevisionsOut struct {
	NoteID    string         `json:"note_id" schema:"id"`
	Revisions []NoteRevision `json:"revisions" schema:"max=500"`
	HasMore   bool           `json:"has_more"`
}

type getRevisionIn struct {
	NoteID     string `json:"note_id" schema:"id"`
	RevisionID string `json:"revision_id" schema:"id"`
	View       string `json:"view,omitempty" jsonschema:"As get_note: outline, section (with heading) or full; default cuts a long body." schema:"enum=outline|section|full"`
	Heading    string `json:"heading,omitempty" schema:"max=500"`
	Diff       bool   `json:"diff,omitempty" jsonschema:"Add a unified diff from this revision to the note now."`
}

type getRevisionOut struct {
	NoteID          string  `json:"note_id" schema:"id"`
	RevisionID      string  `json:"revision_id" schema:"id"`
	NoteUpdatedTime int64   `json:"note_updated_time" schema:"min=0,max=9007199254740992"`
	Title           string  `json:"title" schema:"max=10000"`
	Body            *string `json:"body,omitempty" schema:"max=100000000"`
	bodyView
	// Diff runs from the revision to the note as it is now.
	Diff string `json:"diff,omitempty" schema:"max=@max_plan_diff"`
	// DiffCut counts the diff lines left out to keep it bounded.
	DiffCut int `json:"diff_lines_cut,omitempty" schema:"min=0,max=100000000"`
}

// revisionOps returns the note history operations in catalog order.
func (o *Ops) revisionOps() []registry.Operation {
	return []registry.Operation{o.listNoteRevisions(), o.getNoteRevision()}
}

func (o *Ops) listNoteRevisions() registry.Operation {
	desc := "List a note's saved versions (revisions the Joplin apps recorded), newest first. Restore one with preview_note_changes op restore."
	m := o.meta("list_note_revisions", "List note revisions", desc, registry.EffectRead)
	m.Exposure = mcpTransports
	return registry.Define(m, func(ctx context.Context, in listRevisionsIn) (listRevisionsOut, error) {
		if _, err := o.loadNote(ctx, in.NoteID, "id"); err != nil {
			return listRevisionsOut{}, err
		}
		revs, err := o.noteRevisions(ctx, in.NoteID)
		if err != nil {
			return listRevisionsOut{}, err
		}
		if in.Limit == 0 {
			in.Limit = 50
		}
		out := listRevisionsOut{NoteID: in.NoteID, Revisions: []NoteRevision{}, HasMore: len(revs) > in.Limit}
		for i := len(revs) - 1; i >= 0 && len(out.Revisions) < in.Limit; i-- {
			r := revs[i]
			out.Revisions = append(out.Revisions, NoteRevision{ID: r.ID, NoteUpdatedTime: r.ItemUpdatedTime, CreatedTime: r.CreatedTime, Encrypted: r.EncryptionApplied != 0})
		}
		return out, nil
	})
}

func (o *Ops) getNoteRevision() registry.Operation {
	desc := "A note as it was at a revision (rebuilt from Joplin's revision data), optionally with a diff to the note now."
	m := o.meta("get_note_revision", "Get note revision", desc, registry.EffectRead)
	m.Exposure = mcpTransports
	return registry.Define(m, func(ctx context.Context, in getRevisionIn) (getRevisionOut, error) {
		n, err := o.loadNote(ctx, in.NoteID, "id,title,body")
		if err != nil {
			return getRevisionOut{}, err
		}
		rev, st, err := o.revisionState(ctx, in.NoteID, in.RevisionID)
		if err != nil {
			return getRevisionOut{}, err
		}
		out := getRevisionOut{NoteID: in.NoteID, RevisionID: rev.ID, NoteUpdatedTime: rev.ItemUpdatedTime, Title: st.Title}
		if out.Body, out.bodyView, err = viewBody(st.Body, in.View, in.Heading, o.maxWholeBody()); err != nil {
			return getRevisionOut{}, err
		}
		if in.Diff {
			title, c1 := edits.Diff("title", st.Title, n.Title, notechanges.MaxNoteDiffBytes)
			body, c2 := edits.Diff("body", st.Body, n.Body, notechanges.MaxPlanDiffBytes-len(title))
			out.Diff, out.DiffCut = title+body, c1+c2
		}
		return out, nil
	})
}

// noteRevisions lists the light fields of a note's revisions, oldest
// first (by the note time they record, as Joplin orders them).
func (o *Ops) noteRevisions(ctx context.Context, noteID string) ([]revision.Revision, error) {
	all, err := joplin.ListAll[revision.Revision](ctx, o.c, "/revisions", url.Values{"fields": {revisionListFields}}, o.limits.MaxScan)
	if err != nil {
		return nil, err
	}
	var out []revision.Revision
	for _, r := range all {
		if r.ItemID == noteID && r.ItemType == revision.ItemTypeNote {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b revision.Revision) int { return cmp.Compare(a.ItemUpdatedTime, b.ItemUpdatedTime) })
	return out, nil
}

// revisionState rebuilds note noteID at revision revID: its parent chain
// is read in full and merged as Joplin's Revision.mergeDiffs does.
func (o *Ops) revisionState(ctx context.Context, noteID, revID string) (revision.Revision, revision.State, error) {
	load := func(id string) (revision.Revision, error) {
		var r revision.Revision
		if err := o.c.Get(ctx, "/revisions/"+id, url.Values{"fields": {revision.Fields}}, &r); err != nil {
			return revision.Revision{}, missing(err, "revision", id)
		}
		return r, nil
	}
	target, err := load(revID)
	if err != nil {
		return revision.Revision{}, revision.State{}, err
	}
	if target.ItemID != noteID || target.ItemType != revision.ItemTypeNote {
		return revision.Revision{}, revision.State{}, notFound("revision", revID)
	}
	chain := []revision.Revision{target}
	for p := target.ParentID; p != ""; p = chain[len(chain)-1].ParentID {
		if len(chain) == maxRevisionChain {
			return revision.Revision{}, revision.State{}, domainerr.New(domainerr.InvalidArgument, "revision %s is built on more than %d revisions", revID, maxRevisionChain)
		}
		r, err := load(p)
		if domainerr.HasCode(err, domainerr.NotFound) {
			break // Joplin's merge skips a parent it cannot find
		}
		if err != nil {
			return revision.Revision{}, revision.State{}, err
		}
		chain = append(chain, r)
	}
	slices.Reverse(chain)
	st, err := revision.Merge(chain)
	switch {
	case errors.Is(err, revision.ErrEncrypted):
		return revision.Revision{}, revision.State{}, domainerr.New(domainerr.InvalidArgument, "revision %s cannot be read: a revision it builds on is still encrypted (sync and decrypt first)", revID)
	case err != nil:
		return revision.Revision{}, revision.State{}, domainerr.New(domainerr.InvalidArgument, "revision %s cannot be rebuilt: %s", revID, err.Error())
	}
	return target, st, nil
}
