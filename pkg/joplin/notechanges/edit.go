package notechanges

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/internal/textdiff"
	"github.com/notebridge/notebridge/pkg/joplin/edits"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
)

// editChange is one change of edit_note, and a plan's change without its
// note and due date (a due date is set through preview and apply).
type editChange struct {
	Op      string  `json:"op" schema:"enum=@change_op"`
	Find    *string `json:"find,omitempty" schema:"max=@max_body"`
	Heading *string `json:"heading,omitempty" schema:"max=500"`
	Text    *string `json:"text,omitempty" schema:"max=@max_body"`
	Count   *int    `json:"count,omitempty" schema:"min=1,max=1000"`
	Target  *string `json:"target,omitempty" schema:"max=500"`
	Create  *bool   `json:"create,omitempty"`
}

// editIn is what edit_note takes: the note, the updated_time the agent
// read it at, and the changes.
type editIn struct {
	ID          string       `json:"id" schema:"id"`
	UpdatedTime int64        `json:"updated_time" schema:"min=0,max=9007199254740992"`
	Changes     []editChange `json:"changes" schema:"max=@max_changes"`
}

// editOut is edit_note's compact summary.
type editOut struct {
	Status       string `json:"status" schema:"enum=applied|replayed|noop"`
	ReceiptID    string `json:"receipt_id" schema:"max=64"`
	UpdatedTime  int64  `json:"updated_time" schema:"min=0"`
	LinesChanged int    `json:"lines_changed" schema:"min=0"`
}

func (w *Workflow) editNote() registry.Operation {
	desc := "Edit a note read at updated_time (else PLAN_MISMATCH). replace: find, text, count; set_section, insert_after: heading, text; delete_section: heading; append, prepend, title: text; tag, untag, move: target (tag title ok; create: true)."
	m := w.meta("edit_note", "Edit note", desc, registry.EffectUpdate)
	// GPT Actions take at most 30 operations; they keep preview and apply.
	m.Exposure = []registry.Transport{registry.MCPStdio, registry.MCPHTTP}
	return registry.Define(m, w.doEdit)
}

// changes turns in into plan changes of its note.
func (in editIn) changes() []change {
	out := make([]change, len(in.Changes))
	for i, c := range in.Changes {
		out[i] = change{Note: in.ID, editChange: c}
	}
	return out
}

// editReceiptID binds a receipt to the changes and the base they were
// made against, so a retry of the same call replays its receipt.
func editReceiptID(request string, base int64) string {
	raw, _ := json.Marshal(struct {
		Kind    string `json:"kind"`
		Request string `json:"request"`
		Base    int64  `json:"base"`
	}{"joplin-note-edit/1", request, base})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// doEdit applies the changes to one note under the create lock,
// compare-and-swap on the updated_time the caller read: the plan is built
// from the note as it is, and a note that moved since is PLAN_MISMATCH
// naming it. A retry of an applied call replays its receipt.
func (w *Workflow) doEdit(ctx context.Context, in editIn) (editOut, error) {
	cs := in.changes()
	if err := w.validateChanges(cs); err != nil {
		return editOut{}, err
	}
	st, err := w.receiptStore()
	if err != nil {
		return editOut{}, err
	}
	unlock, err := w.j.Lock(ctx)
	if err != nil {
		return editOut{}, err
	}
	defer unlock()
	request := requestDigest(cs)
	id := editReceiptID(request, in.UpdatedTime)
	rec, ok, err := st.Load(id)
	if err != nil {
		return editOut{}, err
	}
	if ok && rec.Kind == receipts.KindApply {
		// A caller limited to some notebooks replays only what it may see.
		if ok, err = w.receiptVisible(ctx, rec); err != nil {
			return editOut{}, err
		}
	}
	if ok && rec.Kind == receipts.KindApply {
		if !rec.Done {
			if err := w.writeNotes(ctx, st, rec, true); err != nil {
				return editOut{}, err
			}
		}
		return editSummary("replayed", rec), nil
	}
	p, err := w.buildPlan(ctx, cs)
	if err != nil {
		return editOut{}, err
	}
	if len(p.Notes) == 1 && p.Notes[0].UpdatedTime != in.UpdatedTime {
		return editOut{}, domainerr.New(domainerr.PlanMismatch,
			"note %s changed since updated_time %d (now %d); nothing was written; read it again", in.ID, in.UpdatedTime, p.Notes[0].UpdatedTime).
			WithDetails(map[string]any{"moved": []string{in.ID}, "updated_time": p.Notes[0].UpdatedTime})
	}
	if err := planProblems(p); err != nil {
		return editOut{}, err
	}
	if p.Digest == "" {
		return editOut{Status: "noop", UpdatedTime: in.UpdatedTime}, nil
	}
	written, err := w.writePlan(ctx, st, p, id, request)
	if err != nil {
		return editOut{}, err
	}
	return editSummary("applied", written), nil
}

// planProblems is the error of a plan that cannot apply: NOT_FOUND for a
// missing note, INVALID_ARGUMENT listing the problems otherwise.
func planProblems(p *plan) error {
	if len(p.Problems) == 0 {
		return nil
	}
	if len(p.Notes) == 0 {
		return domainerr.New(domainerr.NotFound, "%s", p.Problems[0]).WithDetails(map[string]any{"missing": "note"})
	}
	probs := make([]problem, len(p.Problems))
	for i, msg := range p.Problems {
		probs[i] = problem{Path: "/changes", Reason: msg}
	}
	return domainerr.New(domainerr.InvalidArgument, "%d change(s) cannot apply; nothing was written; see details.problems", len(probs)).
		WithDetails(map[string]any{"problems": probs})
}

// editSummary counts what rec wrote: its note's new updated_time and the
// lines of title and body that changed.
func editSummary(status string, rec *receipts.Receipt) editOut {
	out := editOut{Status: status, ReceiptID: rec.ID}
	for _, n := range rec.Notes {
		out.UpdatedTime = max(out.UpdatedTime, rec.Updated[n.ID], n.BaseUpdatedTime)
		out.LinesChanged += textdiff.Changed(edits.Lines(n.Before.Body), edits.Lines(n.After.Body))
		if n.Before.Title != n.After.Title {
			out.LinesChanged += 2
		}
	}
	return out
}
