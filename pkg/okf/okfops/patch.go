package okfops

import (
	"context"
	"errors"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/edit"
	"github.com/notebridge/notebridge/pkg/okf/plan"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

const patchKind = "concept_patch"

// patchOps is the list of operation names, in documentation order.
var patchOps = []string{
	"set_generated", "ensure_verification", "remove_verification", "put_source", "remove_source",
	"set_usage_window", "set_lifecycle", "put_attested_computation", "set_bundle_version",
}

type patchIn struct {
	BundlePath string    `json:"bundle_path" schema:"min=1,max=4096"`
	Operations []PatchOp `json:"operations" jsonschema:"Applied in order." schema:"max=@max_patch_ops,itemdesc=Omit fields op does not use."`
}

type patchApplyIn struct {
	patchIn
	ExpectedRevision   string `json:"expected_revision" schema:"max=80"`
	ExpectedPlanDigest string `json:"expected_plan_digest" schema:"max=80"`
}

const maxPatchOps = 500

// patchMeta is the metadata of a concept patch operation: patch inputs
// allow fewer receipt entries than a projection reports.
func (o *Ops) patchMeta(name, title, desc string, effect registry.Effect) registry.Meta {
	m := o.meta(name, title, desc, effect)
	m.Vocab.Bounds["receipts"] = 1000
	m.Vocab.Enums["preview_status"] = []string{"applicable", "noop", "rejected"}
	return m
}

func (o *Ops) previewConceptPatch() registry.Operation {
	desc := "Preview typed metadata operations on concepts (generated, verification, sources, usage window, lifecycle, attested computation, bundle version) as byte patches."
	return registry.Define(o.patchMeta("preview_concept_patch", "Preview a change to a concept", desc, registry.EffectRead),
		func(ctx context.Context, in patchIn) (previewOut, error) {
			var out previewOut
			err := o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
				base, err := o.snapshot(b)
				if err != nil {
					return bundle.PathErr(err)
				}
				p, diags, err := o.buildPatch(b, base, in.Operations)
				if err != nil {
					return err
				}
				out = newPreview(p, diags)
				switch {
				case hasErrors(diags):
					out.Status = "rejected"
					out.AffectedPaths, out.Diff = []string{}, []FileDiff{}
				case p.Noop():
					out.Status = "noop"
				default:
					out.Status, out.ResultRevision, out.PlanDigest = "applicable", p.ResultRevision, p.Digest
				}
				return nil
			})
			return out, err
		})
}

func (o *Ops) applyConceptPatch() registry.Operation {
	desc := "Apply a previewed concept patch: the rebuilt plan must match expected_plan_digest (\"\" for a noop preview: returns noop, writes nothing) and the bundle expected_revision."
	return registry.Define(o.patchMeta("apply_concept_patch", "Apply a reviewed change to a concept", desc, registry.EffectUpdate),
		func(ctx context.Context, in patchApplyIn) (applyOut, error) {
			b, err := o.open(in.BundlePath)
			if err != nil {
				return applyOut{}, err
			}
			defer b.Close()
			bind := binding{Kind: patchKind, RequestDigest: plan.RequestDigest(patchKind, in.Operations),
				ExpectedRevision: in.ExpectedRevision, ExpectedDigest: in.ExpectedPlanDigest}
			return o.applyPlan(ctx, b, bind, func(base store.Manifest) (*plan.Plan, error) {
				p, diags, err := o.buildPatch(b, base, in.Operations)
				if err != nil || hasErrors(diags) {
					return nil, err
				}
				return p, nil
			})
		})
}

// buildPatch applies the operations to the files as they are in base and
// returns the plan plus diagnostics (errors make the plan not apply-ready).
func (o *Ops) buildPatch(b *bundle.Bundle, base store.Manifest, ops []PatchOp) (*plan.Plan, []Diagnostic, error) {
	var diags []Diagnostic
	before := map[string][]byte{}
	current := map[string][]byte{}
	var order []string
	load := func(path string) ([]byte, bool, error) {
		if cur, ok := current[path]; ok {
			return cur, cur != nil, nil
		}
		raw, err := o.readAt(b, base, path)
		if err != nil {
			return nil, false, err
		}
		before[path], current[path] = raw, raw
		order = append(order, path)
		return raw, raw != nil, nil
	}
	for i, op := range ops {
		fail := func(code, msg string) {
			diags = append(diags, Diagnostic{Index: i, ConceptID: op.ConceptID, Code: code, Severity: "error", Message: msg})
		}
		path := "index.md"
		if op.Op != "set_bundle_version" {
			p, err := bundle.ConceptPath(op.ConceptID)
			if err != nil {
				fail("bad_concept_id", "concept_id is missing or invalid")
				continue
			}
			path = p
		}
		src, exists, err := load(path)
		if err != nil {
			return nil, nil, err
		}
		var next []byte
		if op.Op == "set_bundle_version" {
			next, err = setBundleVersion(src, op.Version)
		} else if !exists {
			fail("concept_not_found", "the concept does not exist")
			continue
		} else {
			next, err = applyOp(src, op)
		}
		if err != nil {
			var oe *opError
			if errors.As(err, &oe) {
				fail(oe.code, oe.msg)
				continue
			}
			return nil, nil, err
		}
		current[path] = next
		if strings.HasPrefix(op.By, "human:") && op.Op == "ensure_verification" {
			diags = append(diags, humanVerifierNote(i, op.ConceptID))
		}
	}
	var files []plan.File
	for _, path := range order {
		if string(before[path]) == string(current[path]) {
			continue
		}
		if path != "index.md" {
			for _, p := range newProblems(before[path], current[path]) {
				diags = append(diags, Diagnostic{Index: -1, ConceptID: strings.TrimSuffix(path, ".md"), Code: "result_invalid", Severity: "error",
					Message: "the patched concept would gain problem " + p})
			}
		}
		files = append(files, plan.File{Path: path, Before: before[path], After: current[path]})
	}
	return plan.New(patchKind, plan.RequestDigest(patchKind, ops), base, order, files), diags, nil
}

// newProblems lists blocking problem codes present in after but not in
// before: a patch may leave old problems alone but never adds one.
func newProblems(before, after []byte) []string {
	count := func(src []byte) map[string]int {
		m := map[string]int{}
		d, err := doc.Parse(src, doc.DefaultLimits)
		if err != nil {
			m["parse_error"]++
			return m
		}
		blocking, _ := splitProblems(d)
		for _, p := range blocking {
			m[p.Code]++
		}
		return m
	}
	b, a := count(before), count(after)
	var out []string
	for code, n := range a {
		if n > b[code] {
			out = append(out, code)
		}
	}
	return out
}

// setBundleVersion writes okf_version into the root index.md frontmatter,
// creating the file or the frontmatter block when needed.
func setBundleVersion(src []byte, version string) ([]byte, error) {
	if version != "0.2" {
		return nil, reject("bad_version", "set_bundle_version supports version 0.2")
	}
	if src == nil {
		return []byte("---\nokf_version: \"0.2\"\n---\n"), nil
	}
	d, err := doc.Parse(src, doc.DefaultLimits)
	if err != nil {
		var pe *doc.ParseError
		if errors.As(err, &pe) {
			return nil, reject(pe.Code, "the root index.md cannot be edited safely: %s", pe.Msg)
		}
		return nil, err
	}
	if n := d.Lookup("okf_version"); n != nil && n.Value == version {
		return src, nil
	}
	e, err := edit.New(d)
	if err != nil {
		return nil, editErr(err)
	}
	if err := e.SetKey("okf_version", `"0.2"`); err != nil {
		return nil, editErr(err)
	}
	return e.Bytes()
}
