package okfops

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/edit"
	"github.com/notebridge/notebridge/pkg/okf/plan"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

const temporalKind = "temporal_upgrade"

// maxTemporalMappings bounds the mappings of one request (and the
// unmapped_dates a preview reports).
const maxTemporalMappings = 100_000

// TemporalMapping converts one calendar date to an explicit instant. An
// empty ConceptID or Field widens the mapping to every concept or field.
type TemporalMapping struct {
	Date      string `json:"date" jsonschema:"YYYY-MM-DD as written." schema:"min=1,max=64"`
	Instant   string `json:"instant" jsonschema:"RFC 3339 with offset, on that date." schema:"min=1,max=64"`
	ConceptID string `json:"concept_id,omitempty" schema:"min=1,max=@concept_id"`
	Field     string `json:"field,omitempty" jsonschema:"Field path, e.g. sources[2].last_modified." schema:"min=1,max=64"`
}

type temporalIn struct {
	BundlePath string            `json:"bundle_path" schema:"min=1,max=4096"`
	Mappings   []TemporalMapping `json:"mappings,omitempty" jsonschema:"Most specific match wins: concept+field, concept, field, global." schema:"max=@max_temporal_mappings"`
}

type temporalApplyIn struct {
	temporalIn
	BaseRevision string `json:"base_revision" schema:"max=80"`
	PlanDigest   string `json:"plan_digest" schema:"max=80"`
}

type temporalPreviewOut struct {
	previewOut
	UnmappedDates []string `json:"unmapped_dates" schema:"max=@max_temporal_mappings,itemmin=10,itemmax=10"`
}

func (o *Ops) previewTemporalUpgrade() registry.Operation {
	desc := "Preview upgrading date fields (stale_after, usage_window, sources[].last_modified/usage_window) to instants by explicit mappings; nothing is inferred."
	m := o.meta("preview_temporal_upgrade", "Preview dating a bundle's facts", desc, registry.EffectRead)
	m.Vocab.Enums["preview_status"] = []string{"applicable", "noop", "incomplete", "rejected"}
	return registry.Define(m, func(ctx context.Context, in temporalIn) (temporalPreviewOut, error) {
		req, err := compileTemporal(in.Mappings)
		if err != nil {
			return temporalPreviewOut{}, err
		}
		var out temporalPreviewOut
		err = o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
			base, err := o.snapshot(b)
			if err != nil {
				return bundle.PathErr(err)
			}
			res, err := o.buildTemporal(ctx, b, base, req)
			if err != nil {
				return err
			}
			out = temporalPreviewOut{previewOut: newPreview(res.plan, res.diags), UnmappedDates: res.unmapped}
			switch st := res.status(); st {
			case "applicable":
				out.Status, out.ResultRevision, out.PlanDigest = st, res.plan.ResultRevision, res.plan.Digest
			default:
				out.Status = st
				out.AffectedPaths, out.Diff = []string{}, []FileDiff{}
			}
			return nil
		})
		return out, err
	})
}

func (o *Ops) applyTemporalUpgrade() registry.Operation {
	desc := "Apply a previewed temporal upgrade: the rebuilt plan must match plan_digest and the bundle base_revision."
	return registry.Define(o.meta("apply_temporal_upgrade", "Apply dating a bundle's facts", desc, registry.EffectUpdate),
		func(ctx context.Context, in temporalApplyIn) (applyOut, error) {
			req, err := compileTemporal(in.Mappings)
			if err != nil {
				return applyOut{}, err
			}
			b, err := o.open(in.BundlePath)
			if err != nil {
				return applyOut{}, err
			}
			defer b.Close()
			bind := binding{Kind: temporalKind, RequestDigest: req.digest,
				ExpectedRevision: in.BaseRevision, ExpectedDigest: in.PlanDigest}
			return o.applyPlan(ctx, b, bind, func(base store.Manifest) (*plan.Plan, error) {
				res, err := o.buildTemporal(ctx, b, base, req)
				if err != nil || res.status() != "applicable" {
					return nil, err
				}
				return res.plan, nil
			})
		})
}

// scopeKey addresses a mapping: concept and field are "" when the mapping
// does not narrow on them.
type scopeKey struct{ concept, field, date string }

// temporalRequest is a validated, normalized set of mappings.
type temporalRequest struct {
	table  map[scopeKey]string // → instant, valid mappings only
	diags  []Diagnostic        // mapping errors (Index = mapping index)
	digest string              // request digest over the normalized mappings
}

// fieldPathRE matches exactly the paths doc.ProfileFields produces.
var fieldPathRE = regexp.MustCompile(`^(stale_after|usage_window\.(from|to)|sources\[(0|[1-9][0-9]{0,8})\]\.(last_modified|usage_window\.(from|to)))$`)

// compileTemporal validates the mappings and computes the request digest
// over them, sorted canonically with exact duplicates removed.
func compileTemporal(ms []TemporalMapping) (*temporalRequest, error) {
	if len(ms) > maxTemporalMappings {
		return nil, domainerr.New(domainerr.InvalidArgument, "at most %d mappings are accepted", maxTemporalMappings).
			WithDetails(map[string]any{"field": "mappings", "limit": maxTemporalMappings})
	}
	req := &temporalRequest{table: map[scopeKey]string{}}
	fail := func(i int, m TemporalMapping, code, msg string) {
		req.diags = append(req.diags, Diagnostic{Index: i, ConceptID: m.ConceptID, Code: code, Severity: "error", Message: msg})
	}
	for i, m := range ms {
		switch {
		case doc.ClassifyTemporal(m.Date) != doc.TemporalDate:
			fail(i, m, "bad_date", "date must be a real calendar date YYYY-MM-DD")
			continue
		case doc.ClassifyTemporal(m.Instant) != doc.TemporalInstant:
			fail(i, m, "bad_instant", "instant must be an RFC 3339 datetime with an explicit offset")
			continue
		case m.Instant[:10] != m.Date:
			fail(i, m, "mapping_changes_day", "the instant's calendar date differs from date; the upgrade never moves a value to another day")
			continue
		}
		if m.ConceptID != "" {
			if _, err := bundle.ConceptPath(m.ConceptID); err != nil {
				m.ConceptID = "" // never echo an invalid id
				fail(i, m, "bad_concept_id", "concept_id is invalid")
				continue
			}
		}
		if m.Field != "" && !fieldPathRE.MatchString(m.Field) {
			fail(i, m, "bad_field", "field must be a profile field path such as stale_after, usage_window.to or sources[0].last_modified")
			continue
		}
		k := scopeKey{m.ConceptID, m.Field, m.Date}
		if prev, ok := req.table[k]; ok {
			if prev != m.Instant {
				fail(i, m, "conflicting_mappings", "another mapping with the same scope and date names a different instant")
			}
			continue
		}
		req.table[k] = m.Instant
	}
	norm := append([]TemporalMapping(nil), ms...)
	sort.Slice(norm, func(i, j int) bool {
		a, b := norm[i], norm[j]
		switch {
		case a.ConceptID != b.ConceptID:
			return a.ConceptID < b.ConceptID
		case a.Field != b.Field:
			return a.Field < b.Field
		case a.Date != b.Date:
			return a.Date < b.Date
		}
		return a.Instant < b.Instant
	})
	uniq := norm[:0]
	for i, m := range norm {
		if i == 0 || m != norm[i-1] {
			uniq = append(uniq, m)
		}
	}
	req.digest = plan.RequestDigest(temporalKind, uniq)
	return req, nil
}

// lookup returns the instant for a date at (concept, field), preferring the
// most specific mapping.
func (r *temporalRequest) lookup(concept, field, date string) (string, bool) {
	for _, k := range [...]scopeKey{{concept, field, date}, {concept, "", date}, {"", field, date}, {"", "", date}} {
		if v, ok := r.table[k]; ok {
			return v, true
		}
	}
	return "", false
}

type temporalResult struct {
	plan     *plan.Plan
	diags    []Diagnostic
	unmapped []string // distinct unmapped dates, sorted
	dates    int      // date-valued profile fields found
	rejected bool
}

func (r *temporalResult) status() string {
	switch {
	case r.rejected:
		return "rejected"
	case len(r.unmapped) > 0:
		return "incomplete"
	case r.dates == 0 || r.plan.Noop():
		return "noop"
	}
	return "applicable"
}

// buildTemporal reads every concept as it is in base and replaces each
// mapped date value with its instant, in place.
func (o *Ops) buildTemporal(ctx context.Context, b *bundle.Bundle, base store.Manifest, req *temporalRequest) (*temporalResult, error) {
	res := &temporalResult{diags: append([]Diagnostic(nil), req.diags...), unmapped: []string{}}
	res.rejected = len(req.diags) > 0
	conflict := func() error {
		return domainerr.Retryable(domainerr.RevisionConflict, "the bundle changed while the plan was built; retry")
	}
	listed, err := b.Files(ctx)
	if err != nil {
		return nil, err
	}
	var concepts []bundle.File
	for _, f := range listed {
		if f.ID != "" {
			concepts = append(concepts, f)
		}
	}
	inBase := 0
	for _, f := range base.Files {
		if bundle.IDOf(f.Path) != "" {
			inBase++
		}
	}
	if inBase != len(concepts) {
		return nil, conflict()
	}
	unmapped := map[string]bool{}
	var reads []string
	var files []plan.File
	err = b.Scan(ctx, concepts, bundle.WholeFile, func(p bundle.Parsed) error {
		if err := scanFailure(p); err != nil {
			return err
		}
		id, rel := p.File.ID, p.File.Rel
		var raw []byte
		if p.Err != nil {
			r, err := b.Root.ReadFile(rel, o.cfg.Limits.MaxFileBytes)
			if err != nil {
				return bundle.PathErr(err)
			}
			raw = r
		} else {
			raw = p.Doc.Bytes()
		}
		if store.SHA256Hex(raw) != base.Lookup(rel) {
			return conflict()
		}
		reads = append(reads, rel)
		refuse := func(code, msg string) {
			res.rejected = true
			res.diags = append(res.diags, Diagnostic{Index: -1, ConceptID: id, Code: code, Severity: "error", Message: msg})
		}
		if p.Err != nil {
			refuse(parseCode(p.Err), "the concept cannot be parsed, so its temporal values cannot be upgraded safely")
			return nil
		}
		after, err := upgradeConcept(p.Doc, id, req, res, unmapped)
		if err != nil {
			var oe *opError
			if errors.As(err, &oe) {
				refuse(oe.code, oe.msg)
				return nil
			}
			return err
		}
		if after == nil {
			return nil
		}
		for _, code := range newProblems(raw, after) {
			refuse("result_invalid", "the upgraded concept would gain problem "+code)
		}
		files = append(files, plan.File{Path: rel, Before: raw, After: after})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for d := range unmapped {
		res.unmapped = append(res.unmapped, d)
	}
	sort.Strings(res.unmapped)
	if len(res.unmapped) > maxTemporalMappings {
		res.unmapped = res.unmapped[:maxTemporalMappings]
	}
	res.plan = plan.New(temporalKind, req.digest, base, reads, files)
	return res, nil
}

// upgradeConcept returns d's bytes with every date value replaced by its
// mapped instant, or nil when d has no date values or some lack a mapping.
// Unmapped dates and invalid values are recorded in res.
func upgradeConcept(d *doc.Document, id string, req *temporalRequest, res *temporalResult, unmapped map[string]bool) ([]byte, error) {
	type change struct{ path, value, instant string }
	var changes []change
	incomplete := false
	for _, f := range d.ProfileFields() {
		switch f.Kind {
		case doc.TemporalInvalid:
			res.diags = append(res.diags, Diagnostic{Index: -1, ConceptID: id, Code: "invalid_temporal_left", Severity: "info",
				Message: f.Path + " is neither a date nor an instant and is left unchanged"})
		case doc.TemporalDate:
			res.dates++
			inst, ok := req.lookup(id, f.Path, f.Value)
			if !ok {
				unmapped[f.Value] = true
				incomplete = true
				res.diags = append(res.diags, Diagnostic{Index: -1, ConceptID: id, Code: "unmapped_date", Severity: "error",
					Message: f.Path + ": no mapping for date " + f.Value})
				continue
			}
			changes = append(changes, change{f.Path, f.Value, inst})
		}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	nodes := profileNodes(d)
	e, err := edit.New(d)
	if err != nil {
		return nil, editErr(err)
	}
	for _, c := range changes {
		n := nodes[c.path]
		if n == nil || n.Value != c.value {
			return nil, reject("ambiguous_yaml", "%s could not be located exactly", c.path)
		}
		if err := e.ReplaceScalar(n, c.instant); err != nil {
			return nil, editErr(err)
		}
	}
	after, err := e.Bytes()
	if err != nil {
		return nil, editErr(err)
	}
	if incomplete {
		// The edits were tried so that refusals surface now; a half
		// upgraded concept is never planned.
		return nil, nil
	}
	// The result must carry exactly the instants at the edited paths.
	nd, err := doc.Parse(after, doc.DefaultLimits)
	if err != nil {
		return nil, reject("result_invalid", "the upgraded concept does not parse")
	}
	got := map[string]doc.TemporalField{}
	for _, f := range nd.ProfileFields() {
		got[f.Path] = f
	}
	for _, c := range changes {
		if f := got[c.path]; f.Kind != doc.TemporalInstant || f.Value != c.instant {
			return nil, reject("result_invalid", "%s does not read back as the mapped instant", c.path)
		}
	}
	return after, nil
}

// profileNodes maps each profile field path (as doc.ProfileFields names
// it) to its value node.
func profileNodes(d *doc.Document) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	put := func(path string, n *yaml.Node) {
		if n != nil {
			out[path] = n
		}
	}
	window := func(path string, n *yaml.Node) {
		if n != nil && n.Kind == yaml.MappingNode {
			put(path+".from", mappingValue(n, "from"))
			put(path+".to", mappingValue(n, "to"))
		}
	}
	put("stale_after", d.Lookup("stale_after"))
	window("usage_window", d.Lookup("usage_window"))
	if s := d.Lookup("sources"); s != nil && s.Kind == yaml.SequenceNode {
		for i, item := range s.Content {
			if item.Kind != yaml.MappingNode {
				continue
			}
			p := "sources[" + strconv.Itoa(i) + "]"
			put(p+".last_modified", mappingValue(item, "last_modified"))
			window(p+".usage_window", mappingValue(item, "usage_window"))
		}
	}
	return out
}

// mappingValue returns the value of key in mapping node m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
