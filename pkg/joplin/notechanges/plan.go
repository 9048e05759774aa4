package notechanges

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sync"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/edits"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
)

// Bounds of a preview: its diffs fit a GPT Actions answer (100,000
// characters) with room to spare, and a plan's receipt stays bounded.
const (
	MaxPlanDiffBytes = 60_000
	MaxNoteDiffBytes = 16_000
	minNoteDiffBytes = 512
	maxReceiptBytes  = 32 << 20
)

// planNoteFields are the note properties a plan reads.
const planNoteFields = "id,parent_id,title,body,is_todo,todo_due,updated_time,deleted_time"

// plannedNote is one note of a plan: as read, and as the changes leave it.
type plannedNote struct {
	ID          string
	UpdatedTime int64
	Before      receipts.State
	After       receipts.State
}

func (n plannedNote) changed() bool { return !sameState(n.Before, n.After) }

// plan is a request bound to the notes it was built from. Digest is set
// only when the plan is applicable.
type plan struct {
	Notes    []plannedNote // every note the changes name, in first-mention order
	Problems []string
	Digest   string
}

func stateOf(n joplin.Note, tags []string) receipts.State {
	return receipts.State{Title: n.Title, Body: n.Body, NotebookID: n.ParentID, IsTodo: n.IsTodo == 1, TodoDue: n.TodoDue, Tags: tags}
}

func sameState(a, b receipts.State) bool {
	return sameFields(a, b) && slices.Equal(a.Tags, b.Tags)
}

// sameFields compares everything but tags.
func sameFields(a, b receipts.State) bool {
	return a.Title == b.Title && a.Body == b.Body && a.NotebookID == b.NotebookID && a.IsTodo == b.IsTodo && a.TodoDue == b.TodoDue
}

// noteTags lists the ids of a note's tags, sorted.
func (w *Workflow) noteTags(ctx context.Context, id string) ([]string, error) {
	tags, err := joplin.ListAll[tagRef](ctx, w.c, "/notes/"+id+"/tags", url.Values{"fields": {"id"}}, w.maxTags)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		out = append(out, t.ID)
	}
	slices.Sort(out)
	return out, nil
}

// readState reads a note's current state; tags are read when withTags.
func (w *Workflow) readState(ctx context.Context, id string, withTags bool) (joplin.Note, receipts.State, error) {
	n, err := w.j.Note(ctx, id, planNoteFields)
	if err != nil {
		return joplin.Note{}, receipts.State{}, err
	}
	var tags []string
	if withTags {
		if tags, err = w.noteTags(ctx, id); err != nil {
			return joplin.Note{}, receipts.State{}, err
		}
	}
	return n, stateOf(n, tags), nil
}

// buildPlan reads every note the changes name and applies the changes in
// order. A change that cannot apply is a problem of the plan, not an error;
// errors are Joplin failures.
func (w *Workflow) buildPlan(ctx context.Context, cs []change) (*plan, error) {
	p := &plan{}
	byNote := map[string][]int{}
	var order []string
	for i, c := range cs {
		if _, seen := byNote[c.Note]; !seen {
			order = append(order, c.Note)
		}
		byNote[c.Note] = append(byNote[c.Note], i)
	}
	targets := map[string]string{} // "kind:id" -> problem ("" when usable)
	var receiptBytes int
	for _, id := range order {
		withTags := false
		for _, i := range byNote[id] {
			withTags = withTags || cs[i].Op == opTag || cs[i].Op == opUntag
		}
		n, st, err := w.readState(ctx, id, withTags)
		if domainerr.HasCode(err, domainerr.NotFound) {
			p.Problems = append(p.Problems, fmt.Sprintf("note %s: not found", id))
			continue
		}
		if err != nil {
			return nil, err
		}
		if n.DeletedTime > 0 {
			p.Problems = append(p.Problems, fmt.Sprintf("note %s: in the trash; restore it first", id))
			continue
		}
		pn := plannedNote{ID: id, UpdatedTime: n.UpdatedTime, Before: st, After: st}
		pn.After.Tags = slices.Clone(st.Tags)
		for _, i := range byNote[id] {
			if msg, err := w.applyChange(ctx, &pn.After, cs[i], targets); err != nil {
				return nil, err
			} else if msg != "" {
				p.Problems = append(p.Problems, fmt.Sprintf("change %d (note %s): %s", i, id, msg))
			}
		}
		receiptBytes += len(pn.Before.Body) + len(pn.After.Body)
		p.Notes = append(p.Notes, pn)
	}
	if receiptBytes > maxReceiptBytes {
		p.Problems = append(p.Problems, fmt.Sprintf("the notes' bodies before and after total %d bytes; a plan's receipt holds at most %d", receiptBytes, maxReceiptBytes))
	}
	if len(p.Problems) == 0 && p.changes() > 0 {
		p.Digest = planDigest(cs, p.Notes)
	}
	return p, nil
}

// applyChange applies c to s. It returns why c cannot apply, or "".
func (w *Workflow) applyChange(ctx context.Context, s *receipts.State, c change, targets map[string]string) (string, error) {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch c.Op {
	case opTitle:
		s.Title = *c.Text
	case opMove:
		msg, err := w.checkTarget(ctx, "notebook", *c.Target, targets)
		if err != nil || msg != "" {
			return msg, err
		}
		s.NotebookID = *c.Target
	case opTag, opUntag:
		id, msg, err := w.resolveTag(ctx, *c.Target, c.Op == opTag && c.Create != nil && *c.Create, targets)
		if err != nil || msg != "" {
			return msg, err
		}
		switch {
		case c.Op == opTag && !slices.Contains(s.Tags, id):
			s.Tags = append(s.Tags, id)
			slices.Sort(s.Tags)
		case c.Op == opUntag:
			s.Tags = slices.DeleteFunc(s.Tags, func(t string) bool { return t == id })
		}
	case opRestore:
		title, body, err := w.j.Revision(ctx, c.Note, *c.Target)
		if de, ok := domainerr.As(err); ok && (de.Code == domainerr.NotFound || de.Code == domainerr.InvalidArgument) {
			return de.Message, nil
		} else if err != nil {
			return "", err
		}
		s.Title, s.Body = title, body
	case opTodo:
		s.IsTodo = true
	case opUntodo:
		s.IsTodo, s.TodoDue = false, 0
	case opDue:
		if !s.IsTodo {
			return "due needs a to-do (add a todo change first)", nil
		}
		s.TodoDue = *c.Due
	default:
		count := 0
		if c.Count != nil {
			count = *c.Count
		}
		body, err := edits.Apply(s.Body, edits.Edit{Op: c.Op, Find: str(c.Find), Heading: str(c.Heading), Text: str(c.Text), Count: count})
		if err != nil {
			return err.Error(), nil
		}
		if len(body) > w.maxBody*4 {
			return "the body would exceed the size limit", nil
		}
		s.Body = body
	}
	return "", nil
}

// checkTarget checks once per plan that a move's notebook or a tag exists
// (and a notebook is not trashed).
func (w *Workflow) checkTarget(ctx context.Context, kind, id string, seen map[string]string) (string, error) {
	key := kind + ":" + id
	if msg, ok := seen[key]; ok {
		return msg, nil
	}
	var err error
	msg := ""
	if kind == "tag" {
		err = w.j.Tag(ctx, id)
	} else {
		var trashed bool
		if trashed, err = w.j.Notebook(ctx, id); err == nil && trashed {
			msg = "notebook " + id + " is in the trash"
		}
	}
	switch {
	case domainerr.HasCode(err, domainerr.NotFound):
		msg = kind + " " + id + " does not exist"
	case err != nil:
		return "", err
	}
	seen[key] = msg
	return msg, nil
}

func (p *plan) changes() int {
	n := 0
	for _, pn := range p.Notes {
		if pn.changed() {
			n++
		}
	}
	return n
}

func stateDigest(s receipts.State) string {
	raw, _ := json.Marshal(s)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// planDigest binds the request to every note's base (updated_time and
// state) and result.
func planDigest(cs []change, notes []plannedNote) string {
	type noteRef struct {
		ID          string `json:"id"`
		UpdatedTime int64  `json:"updated_time"`
		Before      string `json:"before"`
		After       string `json:"after"`
	}
	refs := make([]noteRef, 0, len(notes))
	for _, n := range notes {
		refs = append(refs, noteRef{n.ID, n.UpdatedTime, stateDigest(n.Before), stateDigest(n.After)})
	}
	raw, _ := json.Marshal(struct {
		Kind    string    `json:"kind"`
		Changes []change  `json:"changes"`
		Notes   []noteRef `json:"notes"`
	}{"joplin-note-changes/1", cs, refs})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// requestDigest identifies the changes of a request, so a plan digest
// paired with other changes is not taken for its own replay.
func requestDigest(cs []change) string {
	raw, _ := json.Marshal(cs)
	sum := sha256.Sum256(append([]byte("joplin-note-changes-request/1\n"), raw...))
	return hex.EncodeToString(sum[:])
}

type previewNote struct {
	ID          string `json:"id" schema:"max=32"`
	UpdatedTime int64  `json:"updated_time" schema:"min=0,max=9007199254740992"`
	Diff        string `json:"diff" schema:"max=@max_plan_diff"`
	Cut         int    `json:"cut" schema:"min=0,max=2147483648"`
}

type previewOut struct {
	Status     string        `json:"status" schema:"enum=applicable|noop|rejected"`
	PlanDigest string        `json:"plan_digest,omitempty" schema:"max=64"`
	Notes      []previewNote `json:"notes" schema:"max=@max_plan_notes"`
	Problems   []string      `json:"problems" schema:"max=@max_problems,itemmax=1000"`
}

// preview renders p: per changed note its base updated_time and a diff of
// title, notebook, to-do fields, tags and body, all bounded; a rejected
// plan lists its problems and has no digest.
func (p *plan) preview() previewOut {
	out := previewOut{Notes: []previewNote{}, Problems: []string{}}
	if len(p.Problems) > 0 {
		out.Status, out.Problems = "rejected", p.Problems
		return out
	}
	if p.Digest == "" {
		out.Status = "noop"
		return out
	}
	out.Status, out.PlanDigest = "applicable", p.Digest
	budget := MaxPlanDiffBytes
	left := p.changes()
	for _, n := range p.Notes {
		if !n.changed() {
			continue
		}
		share := min(MaxNoteDiffBytes, max(minNoteDiffBytes, budget/left), budget)
		d, cut := noteDiff(n, share)
		budget -= len(d)
		left--
		out.Notes = append(out.Notes, previewNote{ID: n.ID, UpdatedTime: n.UpdatedTime, Diff: d, Cut: cut})
	}
	return out
}

// noteDiff renders one note's change within maxBytes: property lines
// first, then unified diffs of title and body.
func noteDiff(n plannedNote, maxBytes int) (string, int) {
	a, b := n.Before, n.After
	var meta string
	if a.NotebookID != b.NotebookID {
		meta += fmt.Sprintf("notebook: %s -> %s\n", a.NotebookID, b.NotebookID)
	}
	if a.IsTodo != b.IsTodo {
		meta += fmt.Sprintf("todo: %v -> %v\n", a.IsTodo, b.IsTodo)
	}
	if a.TodoDue != b.TodoDue {
		meta += fmt.Sprintf("due: %d -> %d\n", a.TodoDue, b.TodoDue)
	}
	for _, t := range b.Tags {
		if !slices.Contains(a.Tags, t) {
			meta += "tag: +" + t + "\n"
		}
	}
	for _, t := range a.Tags {
		if !slices.Contains(b.Tags, t) {
			meta += "tag: -" + t + "\n"
		}
	}
	cut := 0
	if len(meta) > maxBytes {
		return "", len(edits.Lines(meta)) + 2
	}
	title, c1 := edits.Diff("title", a.Title, b.Title, maxBytes-len(meta))
	body, c2 := edits.Diff("body", a.Body, b.Body, maxBytes-len(meta)-len(title))
	cut += c1 + c2
	return meta + title + body, cut
}

// previewMemo remembers, per digest of a recent preview in this process,
// each note's base updated_time, so a mismatching apply can name the notes
// that moved. It is bounded; a forgotten preview lists every note instead.
type previewMemo struct {
	mu    sync.Mutex
	order []string
	bases map[string]map[string]int64
}

const memoSize = 256

func (m *previewMemo) remember(p *plan) {
	if p.Digest == "" {
		return
	}
	bases := map[string]int64{}
	for _, n := range p.Notes {
		bases[n.ID] = n.UpdatedTime
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bases == nil {
		m.bases = map[string]map[string]int64{}
	}
	if _, ok := m.bases[p.Digest]; !ok {
		m.order = append(m.order, p.Digest)
	}
	m.bases[p.Digest] = bases
	for len(m.order) > memoSize {
		delete(m.bases, m.order[0])
		m.order = m.order[1:]
	}
}

func (m *previewMemo) lookup(digest string) (map[string]int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.bases[digest]
	return b, ok
}
