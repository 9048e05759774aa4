package okfops

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

type writeIn struct {
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
	ConceptID  string `json:"concept_id" schema:"min=1,max=@concept_id"`
	Content    string `json:"content" jsonschema:"Whole file, byte-exact: YAML frontmatter with a type, then Markdown." schema:"min=1,max=@max_file_bytes"`
}

type writeOut struct {
	ConceptID      string        `json:"concept_id" schema:"min=1,max=@concept_id"`
	ChangeID       string        `json:"change_id" schema:"max=80"`
	IdempotencyKey string        `json:"idempotency_key" schema:"max=64"`
	Actor          string        `json:"actor" schema:"enum=@actor"`
	BaseRevision   string        `json:"base_revision" schema:"max=80"`
	ResultRevision string        `json:"result_revision" schema:"max=80"`
	Changed        bool          `json:"changed"`
	Created        bool          `json:"created"`
	Replayed       bool          `json:"replayed"`
	CommittedAt    string        `json:"committed_at,omitempty" schema:"max=64"`
	Warnings       []doc.Problem `json:"warnings" schema:"max=10000"`
	Diagnostics    []Diagnostic  `json:"diagnostics" schema:"max=10"`
}

// writePolicy is the resolved policy that, with the content, identifies a
// write_concept change.
type writePolicy struct {
	Tool       string `json:"tool"`
	Actor      string `json:"actor"`
	Validation string `json:"validation"`
	OKFVersion string `json:"okf_version"`
}

// blockingWarnings are Check warnings that write_concept refuses: a new
// document must have well-formed families even though readers tolerate
// malformed ones.
var blockingWarnings = map[string]bool{
	"bad_title": true, "bad_description": true, "bad_resource": true, "bad_tags": true,
	"bad_sources": true, "source_missing_resource": true, "duplicate_source_id": true,
	"bad_generated": true, "bad_verified": true, "bad_status": true, "bad_temporal": true,
	"attested_missing_runtime": true, "bad_parameters": true,
}

func (o *Ops) writeConcept() registry.Operation {
	desc := "Replace or create one whole concept; prefer patch operations where they apply. Invalid content writes nothing."
	return registry.Define(o.meta("write_concept", "Write a knowledge concept", desc, registry.EffectUpdate), o.write)
}

func (o *Ops) write(ctx context.Context, in writeIn) (writeOut, error) {
	rel, err := bundle.ConceptPath(in.ConceptID)
	if err != nil {
		return writeOut{}, err
	}
	content := []byte(in.Content)
	nd, warnings, err := o.checkContent(content)
	if err != nil {
		return writeOut{}, err
	}
	b, err := o.open(in.BundlePath)
	if err != nil {
		return writeOut{}, err
	}
	defer b.Close()
	declared, ok, err := b.DeclaredVersion()
	if err != nil {
		return writeOut{}, err
	}
	if !ok {
		declared = "undeclared"
	}
	if err := o.checkAgainstExisting(b, in.ConceptID, nd, declared); err != nil {
		return writeOut{}, err
	}
	policy, _ := json.Marshal(writePolicy{Tool: "write_concept", Actor: Actor, Validation: "notebridge-okf-write/1", OKFVersion: declared})
	contentSHA := store.SHA256Hex(content)
	changeID := "sha256:" + store.SHA256Hex([]byte("notebridge/okf/change/v1\n"+in.ConceptID+"\n"+contentSHA+"\n"+string(policy)))
	key := store.SHA256Hex([]byte("notebridge/okf/idempotency/v1\n" + changeID))
	st := o.newStore(b)
	outc, err := st.Commit(ctx, store.Request{
		Kind: "write_concept", Key: key, ChangeID: changeID, Actor: Actor,
		RequestDigest: "sha256:" + store.SHA256Hex([]byte("write_concept\n"+in.ConceptID+"\n"+contentSHA)),
		Files:         []store.FileChange{{Path: rel, Content: content}},
		// A receipt replays only while the concept still holds this
		// content; content written since makes the same request a new write.
		Replayable: func(store.Receipt) (bool, error) {
			cur, err := store.HashFile(b.Root, rel, o.cfg.Limits.MaxFileBytes)
			return cur == contentSHA, err
		},
	})
	if err != nil {
		return writeOut{}, bundle.PathErr(err)
	}
	r := outc.Receipt
	out := writeOut{
		ConceptID: in.ConceptID, ChangeID: changeID, IdempotencyKey: key, Actor: Actor,
		BaseRevision: r.BaseRevision, ResultRevision: r.ResultRevision, Replayed: outc.Replayed,
		Warnings: warnings, Diagnostics: []Diagnostic{},
	}
	for _, v := range nd.Project().Verified {
		if strings.HasPrefix(v.By, "human:") {
			out.Diagnostics = append(out.Diagnostics, humanVerifierNote(-1, in.ConceptID))
			break
		}
	}
	if !outc.Noop {
		out.CommittedAt = r.CommittedAt
	}
	for _, f := range r.Files {
		if f.Path == rel {
			out.Changed, out.Created = true, f.BaseSHA == ""
		}
	}
	return out, nil
}

// checkContent validates new concept content on its own and returns the
// parsed document with its non-blocking warnings.
func (o *Ops) checkContent(content []byte) (*doc.Document, []doc.Problem, error) {
	if int64(len(content)) > o.cfg.Limits.MaxFileBytes {
		return nil, nil, domainerr.New(domainerr.ResourceLimit, "content is larger than %d bytes", o.cfg.Limits.MaxFileBytes).
			WithDetails(map[string]any{"limit": "max_file_bytes", "value": o.cfg.Limits.MaxFileBytes})
	}
	if !utf8.Valid(content) {
		return nil, nil, rejected([]doc.Problem{{Code: "not_utf8", Severity: "error", Message: "content is not valid UTF-8"}})
	}
	d, err := doc.Parse(content, o.cfg.Limits.Doc())
	if err != nil {
		return nil, nil, rejected([]doc.Problem{{Code: parseCode(err), Severity: "error", Message: err.Error()}})
	}
	blocking, warnings := splitProblems(d)
	if len(blocking) > 0 {
		return nil, nil, rejected(blocking)
	}
	if warnings == nil {
		warnings = []doc.Problem{}
	}
	return d, warnings, nil
}

// splitProblems divides d's problems into those a write refuses (errors,
// blocking warnings, and dates mixed with instants in one document) and
// the rest. write_concept refuses the first kind; a patch may not add any.
func splitProblems(d *doc.Document) (blocking, rest []doc.Problem) {
	for _, p := range doc.Check(d) {
		if p.Severity == "error" || blockingWarnings[p.Code] {
			blocking = append(blocking, p)
		} else {
			rest = append(rest, p)
		}
	}
	if len(profileKinds(d)) > 1 {
		blocking = append(blocking, doc.Problem{Code: "temporal_profile_mixed", Severity: "error",
			Message: "the content mixes calendar dates and instants in profile-dependent fields"})
	}
	return blocking, rest
}

// checkAgainstExisting keeps a replacement in the temporal profile of the
// concept it replaces, and keeps legacy keys out of a declared 0.2 bundle.
// It reads only the concept's own file and the root index.md.
func (o *Ops) checkAgainstExisting(b *bundle.Bundle, id string, nd *doc.Document, declared string) error {
	if declared == "0.2" && nd.Lookup("timestamp") != nil {
		return rejected([]doc.Problem{{Code: "legacy_timestamp", Severity: "error", Field: "timestamp",
			Message: "the bundle declares okf_version 0.2, which records generated.at instead of timestamp"}})
	}
	old, raw, err := b.ReadConcept(id)
	if raw == nil {
		if de, ok := domainerr.As(err); ok && de.Code == domainerr.NotFound {
			return nil
		}
		return err
	}
	if err != nil {
		return nil // replacing an unparseable concept: nothing to stay consistent with
	}
	oldKinds, newKinds := profileKinds(old), profileKinds(nd)
	if len(oldKinds) == 1 && len(newKinds) == 1 {
		for k := range oldKinds {
			if !newKinds[k] {
				return rejected([]doc.Problem{{Code: "temporal_profile_mismatch", Severity: "error",
					Message: "the content uses a different temporal profile (date vs instant) than the concept it replaces; use the temporal upgrade workflow"}})
			}
		}
	}
	return nil
}

func profileKinds(d *doc.Document) map[doc.TemporalKind]bool {
	kinds := map[doc.TemporalKind]bool{}
	for _, f := range d.ProfileFields() {
		if f.Kind != doc.TemporalInvalid {
			kinds[f.Kind] = true
		}
	}
	return kinds
}

func rejected(problems []doc.Problem) error {
	list := make([]map[string]any, 0, len(problems))
	for _, p := range problems {
		item := map[string]any{"code": p.Code}
		if p.Field != "" {
			item["field"] = p.Field
		}
		list = append(list, item)
	}
	return domainerr.New(domainerr.ValidationFailed, "the concept content was rejected (%s); nothing was written", problems[0].Code).
		WithDetails(map[string]any{"problems": list})
}
