package notechanges

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/schema"
	"github.com/notebridge/notebridge/pkg/joplin/edits"
)

// MaxPlanNotes bounds how many notes one change plan touches.
const MaxPlanNotes = 100

// MaxChanges bounds the change items of one plan.
const MaxChanges = 1000

// The change operations beyond the body edits of package edits.
const (
	opTitle  = "title"
	opMove   = "move"
	opTag    = "tag"
	opUntag  = "untag"
	opTodo   = "todo"
	opUntodo = "untodo"
	opDue    = "due"
	// opRestore sets a note's title and body to a revision's (target).
	opRestore = "restore"
)

// ChangeOps lists every change op, in documentation order.
var ChangeOps = append(append([]string{}, edits.Ops...), opTitle, opMove, opTag, opUntag, opTodo, opUntodo, opDue, opRestore)

// change is one item of a plan request. Which fields an op uses is checked
// by validateChanges, not by the (deliberately compact) schema.
type change struct {
	Note string `json:"note" schema:"max=32"`
	editChange
	Due *int64 `json:"due,omitempty" schema:"min=0,max=@max_due"`
}

// changesIn is the compact input preview and apply share: one change
// object whose fields serve different ops.
type changesIn struct {
	Changes []change `json:"changes" schema:"max=@max_changes"`
}

// changesApplyIn is what apply_note_changes takes: the previewed changes
// and the preview's plan_digest.
type changesApplyIn struct {
	changesIn
	PlanDigest string `json:"plan_digest" schema:"max=64"`
}

// opFields names, per op, the fields it needs (required) and may take.
var opFields = map[string]struct{ required, optional []string }{
	edits.Replace:       {[]string{"find", "text"}, []string{"count"}},
	edits.SetSection:    {[]string{"heading", "text"}, nil},
	edits.DeleteSection: {[]string{"heading"}, nil},
	edits.InsertAfter:   {[]string{"heading", "text"}, nil},
	edits.Append:        {[]string{"text"}, nil},
	edits.Prepend:       {[]string{"text"}, nil},
	opTitle:             {[]string{"text"}, nil},
	opMove:              {[]string{"target"}, nil},
	opTag:               {[]string{"target"}, []string{"create"}},
	opUntag:             {[]string{"target"}, nil},
	opTodo:              {nil, nil},
	opUntodo:            {nil, nil},
	opDue:               {[]string{"due"}, nil},
	opRestore:           {[]string{"target"}, nil},
}

var joplinID = regexp.MustCompile(schema.IDPattern)

// given lists the optional fields c carries.
func (c change) given() map[string]bool {
	return map[string]bool{
		"find": c.Find != nil, "heading": c.Heading != nil, "text": c.Text != nil, "count": c.Count != nil,
		"target": c.Target != nil, "due": c.Due != nil, "create": c.Create != nil,
	}
}

type problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// validateChanges checks what the schema leaves to the handler: ids, the
// fields each op needs and takes, and the bounds of the plan. Every problem
// is listed; values are never quoted.
func (w *Workflow) validateChanges(cs []change) error {
	var probs []problem
	add := func(i int, field, format string, args ...any) {
		path := fmt.Sprintf("/changes/%d", i)
		if field != "" {
			path += "/" + field
		}
		probs = append(probs, problem{Path: path, Reason: fmt.Sprintf(format, args...)})
	}
	if len(cs) == 0 {
		probs = append(probs, problem{Path: "/changes", Reason: "give at least one change"})
	}
	notes := map[string]bool{}
	for i, c := range cs {
		if !joplinID.MatchString(c.Note) {
			add(i, "note", "not a Joplin id (32 lowercase hex characters)")
		}
		notes[c.Note] = true
		spec, known := opFields[c.Op]
		if !known {
			add(i, "op", "unknown op")
			continue
		}
		given := c.given()
		for _, f := range spec.required {
			if !given[f] {
				add(i, f, "%s needs %s", c.Op, f)
			}
			delete(given, f)
		}
		for _, f := range spec.optional {
			delete(given, f)
		}
		for _, f := range []string{"find", "heading", "text", "count", "target", "due", "create"} {
			if given[f] {
				add(i, f, "%s does not take %s", c.Op, f)
			}
		}
		switch {
		case c.Find != nil && *c.Find == "":
			add(i, "find", "must not be empty")
		case c.Heading != nil && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(*c.Heading), "#")) == "":
			add(i, "heading", "must name a heading")
		case c.Op == opTitle && c.Text != nil && (strings.TrimSpace(*c.Text) == "" || len([]rune(*c.Text)) > 500):
			add(i, "text", "a title must be 1 to 500 characters and not blank")
		case (c.Op == edits.Append || c.Op == edits.Prepend) && c.Text != nil && *c.Text == "":
			add(i, "text", "must not be empty")
		case (c.Op == opMove || c.Op == opRestore) && c.Target != nil && !joplinID.MatchString(*c.Target):
			add(i, "target", "not a Joplin id (32 lowercase hex characters)")
		case c.Target != nil && w.j.NormalizeTitle(*c.Target) == "":
			add(i, "target", "a tag id or a title that is not blank")
		}
	}
	if len(notes) > MaxPlanNotes {
		probs = append(probs, problem{Path: "/changes", Reason: fmt.Sprintf("the changes touch %d notes; at most %d per plan", len(notes), MaxPlanNotes)})
	}
	if len(probs) == 0 {
		return nil
	}
	return domainerr.New(domainerr.InvalidArgument, "%d problem(s) in changes; see details.problems", len(probs)).
		WithDetails(map[string]any{"problems": probs})
}

// MaxDue bounds a due date (Unix ms, the year 2286).
const MaxDue = 10_000_000_000_000

func (w *Workflow) previewNoteChanges() registry.Operation {
	desc := "Preview edits to up to 100 notes; writes nothing. Fields by op: replace find, text, count (default 1); sections heading (+text); append, prepend, title text; move, restore target id; tag, untag target id or title (+create); due due (Unix ms, 0 clears). Returns diffs and plan_digest."
	return registry.Define(w.meta("preview_note_changes", "Preview note changes", desc, registry.EffectRead), w.doPreview)
}

func (w *Workflow) applyNoteChanges() registry.Operation {
	desc := "Apply a preview: same changes plus plan_digest; PLAN_MISMATCH if a note changed. Returns receipt_id; a retry replays or completes it."
	return registry.Define(w.meta("apply_note_changes", "Apply note changes", desc, registry.EffectUpdate), w.doApply)
}

type undoIn struct {
	ReceiptID   string `json:"receipt_id" schema:"min=1,max=64"`
	RestoreRest bool   `json:"restore_rest,omitempty"`
}

func (w *Workflow) undoNoteChanges() registry.Operation {
	desc := "Undo a receipt; notes changed since give UNDO_CONFLICT unless restore_rest."
	return registry.Define(w.meta("undo_note_changes", "Undo note changes", desc, registry.EffectUpdate), w.doUndo)
}

// doPreview builds the plan from the current notes and writes nothing.
func (w *Workflow) doPreview(ctx context.Context, in changesIn) (previewOut, error) {
	if err := w.validateChanges(in.Changes); err != nil {
		return previewOut{}, err
	}
	p, err := w.buildPlan(ctx, in.Changes)
	if err != nil {
		return previewOut{}, err
	}
	w.memo.remember(p)
	return p.preview(), nil
}
