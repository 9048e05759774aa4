package okfops

import (
	"context"
	"sort"

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/plan"
	"github.com/notebridge/notebridge/pkg/okf/store"
	"github.com/notebridge/notebridge/pkg/schema"
)

// Diagnostic is one finding of a preview: why it is rejected, blocked or
// incomplete, or a note the reviewer should see.
type Diagnostic struct {
	Index     int    `json:"index"` // operation or mapping index, -1 when none
	ConceptID string `json:"concept_id,omitempty"`
	Code      string `json:"code"`
	Severity  string `json:"severity"` // "error" blocks the plan; "info" does not
	Message   string `json:"message"`
}

// FileDiff is one file's reviewable change.
type FileDiff struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

// previewOut is what every preview returns. PlanDigest is set only when
// Status is "applicable".
type previewOut struct {
	Status         string       `json:"status"`
	BaseRevision   string       `json:"base_revision"`
	ResultRevision string       `json:"result_revision,omitempty"`
	PlanDigest     string       `json:"plan_digest,omitempty"`
	RequestDigest  string       `json:"request_digest"`
	AffectedPaths  []string     `json:"affected_paths"`
	Diff           []FileDiff   `json:"diff"`
	Diagnostics    []Diagnostic `json:"diagnostics"`
}

// applyOut is what every apply returns.
type applyOut struct {
	Status         string   `json:"status"` // applied | replayed | noop
	ChangeID       string   `json:"change_id,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
	Actor          string   `json:"actor"`
	BaseRevision   string   `json:"base_revision"`
	ResultRevision string   `json:"result_revision"`
	AffectedPaths  []string `json:"affected_paths"`
	CommittedAt    string   `json:"committed_at,omitempty"`
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

// Shared workflow schemas.
var (
	digestSchema     = schema.String("", 0, 80)
	diagnosticSchema = schema.Object("", map[string]any{
		"index":      schema.Integer("Operation or mapping index; -1 when none.", -1, 1_000_000),
		"concept_id": text("Concept concerned."),
		"code":       schema.String("Stable code.", 1, 64),
		"severity":   schema.Enum("error blocks the plan; info does not.", "error", "info"),
		"message":    text("Explanation."),
	}, "index", "code", "severity", "message")
	previewProps = map[string]any{
		"base_revision":   revisionSchema,
		"result_revision": revisionSchema,
		"plan_digest":     digestSchema,
		"request_digest":  digestSchema,
		"affected_paths":  schema.Array("Files the plan writes, root index.md last.", text(""), 1_000_000),
		"diff": schema.Array("Unified diffs (first 200 files).", schema.Object("", map[string]any{
			"path": text(""), "diff": schema.String("Unified diff.", 0, 1<<20),
		}, "path", "diff"), maxDiffFiles),
		"diagnostics": schema.Array("Findings.", diagnosticSchema, 1_000_000),
	}
	previewRequired = []string{"status", "base_revision", "request_digest", "affected_paths", "diff", "diagnostics"}
	applyOutSchema  = schema.Object("", map[string]any{
		"status":          schema.Enum("applied: committed now; replayed: an identical apply already committed (durable receipt); noop: nothing to write.", "applied", "replayed", "noop"),
		"change_id":       digestSchema,
		"idempotency_key": schema.String("Receipt key, derived from the plan digest.", 0, 64),
		"actor":           schema.Enum("Fixed adapter principal recorded in the receipt.", Actor),
		"base_revision":   revisionSchema,
		"result_revision": revisionSchema,
		"affected_paths":  schema.Array("Files written.", text(""), 1_000_000),
		"committed_at":    schema.String("When the receipt was made.", 0, 64),
	}, "status", "actor", "base_revision", "result_revision", "affected_paths")
)

func withProps(extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range previewProps {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}
