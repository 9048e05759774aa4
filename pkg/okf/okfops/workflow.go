package okfops

import (
	"context"
	"sort"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/plan"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

// Diagnostic is one finding of a preview: why it is rejected, blocked or
// incomplete, or a note the reviewer should see.
type Diagnostic struct {
	Index     int    `json:"index" schema:"min=-1,max=1000000"` // operation or mapping index, -1 when none
	ConceptID string `json:"concept_id,omitempty" schema:"max=100000"`
	Code      string `json:"code" schema:"min=1,max=64"`
	Severity  string `json:"severity" schema:"enum=error|info"` // "error" blocks the plan; "info" does not
	Message   string `json:"message" schema:"max=100000"`
}

// FileDiff is one file's reviewable change.
type FileDiff struct {
	Path string `json:"path" schema:"max=100000"`
	Diff string `json:"diff" schema:"max=1048576"`
}

// previewOut is what every preview returns. PlanDigest is set only when
// Status is "applicable".
type previewOut struct {
	Status         string       `json:"status" schema:"enum=@preview_status"`
	BaseRevision   string       `json:"base_revision" schema:"max=80"`
	ResultRevision string       `json:"result_revision,omitempty" schema:"max=80"`
	PlanDigest     string       `json:"plan_digest,omitempty" schema:"max=80"`
	RequestDigest  string       `json:"request_digest" schema:"max=80"`
	AffectedPaths  []string     `json:"affected_paths" schema:"max=1000000,itemmax=100000"`
	Diff           []FileDiff   `json:"diff" schema:"max=@max_diff_files"`
	Diagnostics    []Diagnostic `json:"diagnostics" schema:"max=1000000"`
}

// applyOut is what every apply returns.
type applyOut struct {
	Status         string   `json:"status" schema:"enum=applied|replayed|noop"`
	ChangeID       string   `json:"change_id,omitempty" schema:"max=80"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" schema:"max=64"`
	Actor          string   `json:"actor" schema:"enum=@actor"`
	BaseRevision   string   `json:"base_revision" schema:"max=80"`
	ResultRevision string   `json:"result_revision" schema:"max=80"`
	AffectedPaths  []string `json:"affected_paths" schema:"max=1000000,itemmax=100000"`
	CommittedAt    string   `json:"committed_at,omitempty" schema:"max=64"`
}

// maxDiffFiles bounds how many per-file diffs a preview carries; the
// affected paths list stays complete.
const maxDiffFiles = 200

func newPreview(p *plan.Plan, diags []Diagnostic) previewOut {
	out := previewOut{
		BaseRevision: p.BaseRevision, RequestDigest: p.RequestDigest,
		AffectedPaths: []string{}, Diff: []FileDiff{}, Diagnostics: diags,
	}
	if out.Diagnostics == nil {
		out.Diagnostics = []Diagnostic{}
	}
	for _, f := range p.Files {
		out.AffectedPaths = append(out.AffectedPaths, f.Path)
		if len(out.Diff) < maxDiffFiles {
			out.Diff = append(out.Diff, FileDiff{Path: f.Path, Diff: plan.Diff(f.Path, f.Before, f.After)})
		}
	}
	return out
}

// humanVerifierNote flags a human: verifier the caller wrote: it is stored
// as data, and reads report it as claimed-human-review, never as review.
func humanVerifierNote(index int, conceptID string) Diagnostic {
	return Diagnostic{Index: index, ConceptID: conceptID, Code: "caller_supplied_human_verifier", Severity: "info",
		Message: "the human: verifier is recorded as data from the caller; this server did not perform or confirm a review, and reads report it as claimed-human-review"}
}

func hasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == "error" {
			return true
		}
	}
	return false
}

// binding is what an apply must match: the revision the preview saw and
// its plan digest.
type binding struct {
	Kind             string
	RequestDigest    string
	ExpectedRevision string
	ExpectedDigest   string
}

// applyPlan is the one apply path: replay a receipt stored under the key
// derived from the expected digest; otherwise check the live revision,
// rebuild the plan, compare digests and commit with compare-and-swap.
// build must return the plan rebuilt from base (nil plan means "not
// apply-ready", reported as PLAN_MISMATCH). A no-op plan applied with an
// empty expected digest (a noop preview carries none) returns noop.
func (o *Ops) applyPlan(ctx context.Context, b *bundle.Bundle, bind binding, build func(base store.Manifest) (*plan.Plan, error)) (applyOut, error) {
	st := o.newStore(b)
	key := plan.IdempotencyKey(bind.Kind, bind.ExpectedDigest)
	if pending, err := store.JournalPending(b.Root); err != nil {
		return applyOut{}, bundle.PathErr(err)
	} else if pending {
		if err := st.Recover(ctx); err != nil {
			return applyOut{}, bundle.PathErr(err)
		}
	}
	if rec, ok, err := st.LookupReceipt(key); err != nil {
		return applyOut{}, bundle.PathErr(err)
	} else if ok {
		return replayed(rec, bind)
	}
	base, err := o.snapshot(b)
	if err != nil {
		return applyOut{}, bundle.PathErr(err)
	}
	if base.Revision != bind.ExpectedRevision {
		return applyOut{}, domainerr.Retryable(domainerr.RevisionConflict,
			"the bundle changed since the preview and no receipt matches this plan; preview again and review the new plan").
			WithDetails(map[string]any{"expected_revision": bind.ExpectedRevision, "current_revision": base.Revision})
	}
	p, err := build(base)
	if err != nil {
		return applyOut{}, err
	}
	if p != nil && p.Noop() && bind.ExpectedDigest == "" {
		// A matching no-op: the live revision is the one the preview saw
		// and the rebuilt plan still changes nothing. Nothing is written,
		// not even .okf/.
		return applyOut{Status: "noop", Actor: Actor, BaseRevision: base.Revision, ResultRevision: base.Revision, AffectedPaths: []string{}}, nil
	}
	if p == nil || p.Noop() || p.Digest != bind.ExpectedDigest {
		return applyOut{}, domainerr.New(domainerr.PlanMismatch,
			"the plan rebuilt from the live bundle does not match expected_plan_digest; preview again")
	}
	outc, err := st.Commit(ctx, store.Request{
		Kind: bind.Kind, Key: key, RequestDigest: bind.RequestDigest, ChangeID: p.Digest, Actor: Actor,
		ExpectedRevision: p.BaseRevision, Files: p.Changes(),
	})
	if err != nil {
		return applyOut{}, bundle.PathErr(err)
	}
	if outc.Replayed {
		return replayed(outc.Receipt, bind)
	}
	out := fromReceipt(outc.Receipt, "applied", key)
	if outc.Noop {
		out.Status, out.CommittedAt = "noop", ""
	}
	return out, nil
}

func replayed(rec store.Receipt, bind binding) (applyOut, error) {
	if rec.Kind != bind.Kind || rec.RequestDigest != bind.RequestDigest || rec.ChangeID != bind.ExpectedDigest {
		return applyOut{}, domainerr.New(domainerr.ReceiptConflict,
			"a receipt under this plan's key belongs to a different request; nothing was written, preview again")
	}
	if rec.BaseRevision != bind.ExpectedRevision {
		// Only the exact apply replays: its expected revision is the base
		// the receipt was committed against.
		return applyOut{}, domainerr.New(domainerr.PlanMismatch,
			"this plan was applied from a different base revision than the one given; preview again")
	}
	return fromReceipt(rec, "replayed", rec.Key), nil
}

func fromReceipt(rec store.Receipt, status, key string) applyOut {
	out := applyOut{
		Status: status, ChangeID: rec.ChangeID, IdempotencyKey: key, Actor: Actor,
		BaseRevision: rec.BaseRevision, ResultRevision: rec.ResultRevision,
		AffectedPaths: []string{}, CommittedAt: rec.CommittedAt,
	}
	for _, f := range rec.Files {
		out.AffectedPaths = append(out.AffectedPaths, f.Path)
	}
	sort.Strings(out.AffectedPaths)
	return out
}

func (o *Ops) storeLimits() store.Limits {
	return store.Limits{MaxFiles: o.cfg.Limits.MaxFiles, MaxFileBytes: o.cfg.Limits.MaxFileBytes, MaxDepth: o.cfg.Limits.MaxDepth}
}

func (o *Ops) newStore(b *bundle.Bundle) *store.Store {
	return store.New(b.Root, store.Options{Hook: o.cfg.StoreHook, Limits: o.storeLimits(), Cache: o.cfg.Cache})
}
