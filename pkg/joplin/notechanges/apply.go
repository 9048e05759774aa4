package notechanges

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
)

type applyOut struct {
	Status    string `json:"status" schema:"enum=applied|replayed|completed|noop"`
	ReceiptID string `json:"receipt_id" schema:"max=64"`
	Written   int    `json:"written" schema:"min=0,max=@max_plan_notes"`
}

func (w *Workflow) receiptStore() (*receipts.Store, error) {
	if w.receipts == nil {
		return nil, fmt.Errorf("notechanges: no receipt directory configured (joplinops.WithReceiptDir)")
	}
	return w.receipts, nil
}

// doApply applies a previewed plan under the Joplin write lock. A receipt
// under the plan digest is replayed (done) or completed (a failure part-way);
// otherwise the plan is rebuilt from the current notes and must match the
// digest, its receipt is made durable, and each changed note is written
// once, compare-and-swap on its updated_time.
func (w *Workflow) doApply(ctx context.Context, in changesApplyIn) (applyOut, error) {
	if err := w.validateChanges(in.Changes); err != nil {
		return applyOut{}, err
	}
	st, err := w.receiptStore()
	if err != nil {
		return applyOut{}, err
	}
	unlock, err := w.j.Lock(ctx)
	if err != nil {
		return applyOut{}, err
	}
	defer unlock()
	request := requestDigest(in.Changes)
	rec, ok, err := st.Load(in.PlanDigest)
	if err != nil {
		return applyOut{}, err
	}
	if ok && rec.Kind == receipts.KindApply {
		// A caller limited to some notebooks replays only what it may see,
		// as edit_note and undo do: another's receipt reads as missing.
		if ok, err = w.receiptVisible(ctx, rec); err != nil {
			return applyOut{}, err
		}
	}
	if ok && rec.Kind == receipts.KindApply {
		if rec.Request != request {
			return applyOut{}, domainerr.New(domainerr.ReceiptConflict,
				"plan_digest names a receipt made by other changes; nothing was written; preview these changes and apply with their digest").
				WithDetails(map[string]any{"receipt_id": rec.ID})
		}
		if rec.Done {
			return applyOut{Status: "replayed", ReceiptID: rec.ID, Written: len(rec.Written)}, nil
		}
		if err := w.writeNotes(ctx, st, rec, true); err != nil {
			return applyOut{}, err
		}
		return applyOut{Status: "completed", ReceiptID: rec.ID, Written: len(rec.Written)}, nil
	}
	p, err := w.buildPlan(ctx, in.Changes)
	if err != nil {
		return applyOut{}, err
	}
	if p.Digest == "" && len(p.Problems) == 0 && in.PlanDigest == "" {
		return applyOut{Status: "noop", ReceiptID: "", Written: 0}, nil
	}
	if p.Digest != in.PlanDigest {
		return applyOut{}, w.mismatch(p, in.PlanDigest)
	}
	rec, err = w.writePlan(ctx, st, p, p.Digest, request)
	if err != nil {
		return applyOut{}, err
	}
	return applyOut{Status: "applied", ReceiptID: rec.ID, Written: len(rec.Written)}, nil
}

// writePlan records the changed notes of a checked plan in a durable
// receipt with id, creates the tags it marks new, and writes the notes. The
// caller holds the create lock.
func (w *Workflow) writePlan(ctx context.Context, st *receipts.Store, p *plan, id, request string) (*receipts.Receipt, error) {
	rec := &receipts.Receipt{Header: receipts.Header{ID: id, Kind: receipts.KindApply, PlanDigest: p.Digest, Request: request}}
	for _, n := range p.Notes {
		if n.changed() {
			rec.Notes = append(rec.Notes, receipts.Note{ID: n.ID, BaseUpdatedTime: n.UpdatedTime, Before: n.Before, After: n.After})
		}
	}
	if err := w.createPlannedTags(ctx, rec.Notes); err != nil {
		return nil, err
	}
	if err := st.Create(rec); err != nil {
		return nil, err
	}
	if err := w.writeNotes(ctx, st, rec, false); err != nil {
		return nil, err
	}
	return rec, nil
}

// mismatch is the PLAN_MISMATCH of a plan rebuilt with another digest:
// details.moved names the notes whose updated_time differs from the
// preview's (when this process made that preview), details.problems why a
// rebuilt plan no longer applies.
func (w *Workflow) mismatch(p *plan, digest string) error {
	details := map[string]any{}
	moved := []string{}
	if bases, ok := w.memo.lookup(digest); ok {
		for _, n := range p.Notes {
			if base, had := bases[n.ID]; !had || base != n.UpdatedTime {
				moved = append(moved, n.ID)
			}
		}
		for id := range bases {
			if !slices.ContainsFunc(p.Notes, func(n plannedNote) bool { return n.ID == id }) {
				moved = append(moved, id)
			}
		}
		slices.Sort(moved)
		details["moved"] = moved
	} else {
		for _, n := range p.Notes {
			moved = append(moved, n.ID)
		}
		details["notes"] = moved
	}
	if len(p.Problems) > 0 {
		details["problems"] = p.Problems
	}
	return domainerr.New(domainerr.PlanMismatch,
		"the plan rebuilt from the current notes does not match plan_digest (a note changed since the preview, or the changes differ); nothing was written; preview again").
		WithDetails(details)
}

// writeNotes writes each unwritten note of rec once and marks it in the
// receipt, then marks rec done. Right before each write it re-reads the
// note under the lock: a fresh plan of several notes compares updated_time
// with the base (Joplin has no conditional update; a one-note plan was read
// in this call already); a resumed one compares content, so a
// note written before a crash but not yet marked is recognised by its
// result and never written again.
func (w *Workflow) writeNotes(ctx context.Context, st *receipts.Store, rec *receipts.Receipt, resume bool) error {
	for _, n := range rec.Notes {
		if rec.Written[n.ID] {
			continue
		}
		curTags := n.Before.Tags
		putFields := true
		if resume {
			note, cur, err := w.readState(ctx, n.ID, n.After.Tags != nil)
			if err != nil {
				return w.partial(rec, n.ID, err)
			}
			switch {
			case note.DeletedTime > 0:
				return w.partial(rec, n.ID, nil)
			case sameFields(cur, n.After):
				putFields = false
			case !sameFields(cur, n.Before):
				return w.partial(rec, n.ID, nil)
			}
			curTags = cur.Tags
		} else if len(rec.Notes) > 1 {
			// A plan of one note was read moments ago in this call, under
			// the lock; a longer plan re-reads each note right before its
			// write, to keep the window of a lost update short.
			cur, err := w.j.Note(ctx, n.ID, "id,updated_time,deleted_time")
			if err != nil {
				return w.partial(rec, n.ID, err)
			}
			if cur.UpdatedTime != n.BaseUpdatedTime || cur.DeletedTime > 0 {
				return w.partial(rec, n.ID, nil)
			}
		}
		updated, err := w.writeNote(ctx, n, putFields, curTags)
		if err != nil {
			return w.partial(rec, n.ID, err)
		}
		if err := st.MarkWritten(rec, n.ID, updated); err != nil {
			return err
		}
	}
	return st.MarkDone(rec)
}

// writeNote sends one PUT with the fields that change (when putFields),
// then the tag changes from curTags to the result.
func (w *Workflow) writeNote(ctx context.Context, n receipts.Note, putFields bool, curTags []string) (int64, error) {
	var updated int64
	a, b := n.Before, n.After
	req := map[string]any{}
	if putFields {
		if a.Title != b.Title {
			req["title"] = b.Title
		}
		if a.Body != b.Body {
			req["body"] = b.Body
		}
		if a.NotebookID != b.NotebookID {
			req["parent_id"] = b.NotebookID
		}
		if a.IsTodo != b.IsTodo {
			req["is_todo"] = boolInt(b.IsTodo)
		}
		if a.TodoDue != b.TodoDue {
			req["todo_due"] = b.TodoDue
		}
	}
	if len(req) > 0 {
		var written joplin.Note
		if err := w.c.Write(ctx, "PUT", "/notes/"+n.ID, nil, req, &written); err != nil {
			return 0, w.j.WithObjectID(err, n.ID)
		}
		updated = written.UpdatedTime
	}
	for _, t := range b.Tags {
		if !slices.Contains(curTags, t) {
			if err := w.c.Write(ctx, "POST", "/tags/"+t+"/notes", nil, map[string]any{"id": n.ID}, nil); err != nil {
				return 0, w.j.WithObjectID(w.j.Missing(err, "tag", t), n.ID)
			}
		}
	}
	if b.Tags != nil {
		for _, t := range curTags {
			if !slices.Contains(b.Tags, t) {
				if err := w.c.Write(ctx, "DELETE", "/tags/"+t+"/notes/"+n.ID, nil, nil, nil); err != nil {
					return 0, w.j.WithObjectID(w.j.Missing(err, "tag", t), n.ID)
				}
			}
		}
	}
	return updated, nil
}

// partial reports a stop part-way through rec at note id: err from Joplin
// keeps its code, nil means the note changed (PLAN_MISMATCH, or
// UNDO_CONFLICT for an undo). Either way the receipt says which notes were
// written.
func (w *Workflow) partial(rec *receipts.Receipt, id string, err error) error {
	written := []string{}
	for _, n := range rec.Notes {
		if rec.Written[n.ID] {
			written = append(written, n.ID)
		}
	}
	details := map[string]any{"receipt_id": rec.ID, "note_id": id, "written": written}
	if err == nil {
		details["moved"] = []string{id}
		code := domainerr.PlanMismatch
		if rec.Kind == receipts.KindUndo {
			code = domainerr.UndoConflict
		}
		return domainerr.New(code,
			"note %s changed during the write; the notes in details.written were written (receipt %s can be undone)", id, rec.ID).
			WithDetails(details)
	}
	de, ok := domainerr.As(err)
	if !ok {
		return err
	}
	for k, v := range de.Details {
		details[k] = v
	}
	return domainerr.New(de.Code, "%s; the receipt says which notes were written: repeat the same apply or undo to complete it", de.Message).
		WithDetails(details)
}

type undoOut struct {
	Status    string   `json:"status" schema:"enum=undone|replayed"`
	ReceiptID string   `json:"receipt_id" schema:"max=64"`
	Restored  int      `json:"restored" schema:"min=0,max=@max_plan_notes"`
	Skipped   []string `json:"skipped" schema:"max=@max_plan_notes,itemmax=32"`
}

// doUndo restores the pre-images of a receipt's notes that are still as the
// receipt left them. A note changed since is a conflict: with any conflict
// nothing is written unless restore_rest. An unfinished undo of the same
// receipt is completed first; the undo is recorded as a receipt of its own.
func (w *Workflow) doUndo(ctx context.Context, in undoIn) (undoOut, error) {
	if !receipts.ValidID(in.ReceiptID) {
		return undoOut{}, domainerr.New(domainerr.InvalidArgument, "receipt_id is not a receipt id (32 to 64 lowercase hex characters)").
			WithDetails(map[string]any{"problems": []problem{{Path: "/receipt_id", Reason: "not a receipt id"}}})
	}
	st, err := w.receiptStore()
	if err != nil {
		return undoOut{}, err
	}
	unlock, err := w.j.Lock(ctx)
	if err != nil {
		return undoOut{}, err
	}
	defer unlock()
	target, ok, err := st.Load(in.ReceiptID)
	if err != nil {
		return undoOut{}, err
	}
	if ok {
		ok, err = w.receiptVisible(ctx, target)
		if err != nil {
			return undoOut{}, err
		}
	}
	if !ok {
		return undoOut{}, domainerr.New(domainerr.NotFound, "no receipt %s (receipts are kept for a bounded time and number)", in.ReceiptID).
			WithDetails(map[string]any{"missing": "receipt", "id": in.ReceiptID})
	}
	last, err := w.lastUndo(st, target.ID)
	if err != nil {
		return undoOut{}, err
	}
	if last != nil && !last.Done {
		if err := w.writeNotes(ctx, st, last, true); err != nil {
			return undoOut{}, err
		}
		return undoOut{Status: "undone", ReceiptID: last.ID, Restored: len(last.Written), Skipped: nonNil(last.Skipped)}, nil
	}
	var restore []receipts.Note
	var conflicts []map[string]string
	for _, n := range target.Notes {
		cur, state, err := w.readState(ctx, n.ID, n.After.Tags != nil)
		switch {
		case domainerr.HasCode(err, domainerr.NotFound):
			conflicts = append(conflicts, map[string]string{"id": n.ID, "reason": "deleted"})
		case err != nil:
			return undoOut{}, err
		case cur.DeletedTime > 0:
			conflicts = append(conflicts, map[string]string{"id": n.ID, "reason": "in the trash"})
		case sameState(state, n.After):
			restore = append(restore, receipts.Note{ID: n.ID, BaseUpdatedTime: cur.UpdatedTime, Before: n.After, After: n.Before})
		case sameState(state, n.Before):
			// Never written, or already restored: nothing to undo.
		default:
			conflicts = append(conflicts, map[string]string{"id": n.ID, "reason": "changed since the receipt"})
		}
	}
	if len(conflicts) > 0 && !in.RestoreRest {
		return undoOut{}, domainerr.New(domainerr.UndoConflict,
			"%d note(s) changed since receipt %s; nothing was restored; pass restore_rest to restore the others", len(conflicts), in.ReceiptID).
			WithDetails(map[string]any{"receipt_id": in.ReceiptID, "conflicts": conflicts})
	}
	if len(restore) == 0 && len(conflicts) == 0 && last != nil {
		return undoOut{Status: "replayed", ReceiptID: last.ID, Restored: len(last.Written), Skipped: nonNil(last.Skipped)}, nil
	}
	rec := &receipts.Receipt{Header: receipts.Header{ID: newReceiptID(), Kind: receipts.KindUndo, Undoes: target.ID}, Notes: restore}
	for _, c := range conflicts {
		rec.Skipped = append(rec.Skipped, c["id"])
	}
	if err := st.Create(rec); err != nil {
		return undoOut{}, err
	}
	if err := w.writeNotes(ctx, st, rec, false); err != nil {
		return undoOut{}, err
	}
	return undoOut{Status: "undone", ReceiptID: rec.ID, Restored: len(rec.Written), Skipped: nonNil(rec.Skipped)}, nil
}

// lastUndo loads the newest undo receipt of target, or nil.
func (w *Workflow) lastUndo(st *receipts.Store, target string) (*receipts.Receipt, error) {
	all, err := st.List()
	if err != nil {
		return nil, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Kind == receipts.KindUndo && all[i].Undoes == target {
			r, _, err := st.Load(all[i].ID)
			return r, err
		}
	}
	return nil, nil
}

// newReceiptID returns a fresh random receipt id (32 hex characters).
func newReceiptID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// receiptVisible reports whether ctx's caller may see every note of r: a
// receipt touching a note outside its notebooks is, to it, no receipt at
// all. A note since deleted does not hide the receipt (the undo reports
// it as a conflict).
func (w *Workflow) receiptVisible(ctx context.Context, r *receipts.Receipt) (bool, error) {
	if !scopeview.Limited(ctx) {
		return true, nil
	}
	for _, n := range r.Notes {
		err := w.c.Get(ctx, "/notes/"+n.ID, url.Values{"fields": {"id"}}, nil)
		if !domainerr.HasCode(err, domainerr.NotFound) {
			if err != nil {
				return false, err
			}
			continue
		}
		if w.c.Get(joplin.WholeJoplin(ctx), "/notes/"+n.ID, url.Values{"fields": {"id"}}, nil) == nil {
			return false, nil
		}
	}
	return true, nil
}
