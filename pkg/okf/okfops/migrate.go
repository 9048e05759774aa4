package okfops

import (
	"context"
	"errors"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/edit"
	"github.com/notebridge/notebridge/pkg/okf/plan"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

const migrationKind = "v02_migration"

// CitationMapping says what one legacy citation becomes.
type CitationMapping struct {
	ConceptID string `json:"concept_id" schema:"min=1,max=@concept_id"`
	Item      int    `json:"item" jsonschema:"1-based Citations entry." schema:"min=1,max=10000"`
	ID        string `json:"id" schema:"min=1,max=100"`
	Resource  string `json:"resource" schema:"max=100000"`
	Title     string `json:"title,omitempty" schema:"max=100000"`
}

// Source describes the bundle a migration starts from; the preview freezes
// it and the apply must find the same.
type Source struct {
	OKFVersion     string `json:"okf_version" schema:"max=32"`
	Declared       bool   `json:"declared"`
	LegacyConcepts int    `json:"legacy_concepts" schema:"min=0,max=1000000"`
}

// Proof binds an apply to its preview without carrying any content.
type Proof struct {
	Version        int    `json:"version" schema:"min=2,max=2"`
	BaseRevision   string `json:"base_revision" schema:"max=80"`
	RequestDigest  string `json:"request_digest" schema:"max=80"`
	ResultRevision string `json:"result_revision" schema:"max=80"`
}

// NeedsMapping is a citation the preview could not convert on its own.
type NeedsMapping struct {
	ConceptID string `json:"concept_id" schema:"min=1,max=@concept_id"`
	Item      int    `json:"item" schema:"min=1,max=10000"`
	Text      string `json:"text" schema:"max=100000"`
}

type migratePreviewIn struct {
	BundlePath       string            `json:"bundle_path" schema:"min=1,max=4096"`
	GeneratedBy      string            `json:"generated_by" jsonschema:"Actor recorded as generated.by where a legacy timestamp becomes generated.at." schema:"min=1,max=200"`
	LegacyTimestamp  string            `json:"legacy_timestamp" schema:"enum=remove|keep"`
	CitationMappings []CitationMapping `json:"citation_mappings,omitempty" jsonschema:"Conversions for citations the preview lists in needs_mapping, or overrides." schema:"max=100000"`
}

type migrateIn struct {
	migratePreviewIn
	ExpectedSource     *Source `json:"expected_source" jsonschema:"From the preview."`
	Proof              *Proof  `json:"proof,omitempty" jsonschema:"From the preview."`
	ExpectedPlanDigest string  `json:"expected_plan_digest,omitempty" schema:"max=80"`
}

// migrationRequest is the part of the input that defines the change.
type migrationRequest struct {
	GeneratedBy      string            `json:"generated_by"`
	LegacyTimestamp  string            `json:"legacy_timestamp"`
	CitationMappings []CitationMapping `json:"citation_mappings"`
}

func (in migrateIn) request() migrationRequest {
	m := append([]CitationMapping(nil), in.CitationMappings...)
	sort.Slice(m, func(i, j int) bool {
		if m[i].ConceptID != m[j].ConceptID {
			return m[i].ConceptID < m[j].ConceptID
		}
		return m[i].Item < m[j].Item
	})
	if m == nil {
		m = []CitationMapping{}
	}
	return migrationRequest{GeneratedBy: in.GeneratedBy, LegacyTimestamp: in.LegacyTimestamp, CitationMappings: m}
}

type migratePreviewOut struct {
	previewOut
	ExpectedSource Source         `json:"expected_source"`
	Proof          *Proof         `json:"proof,omitempty"`
	NeedsMapping   []NeedsMapping `json:"needs_mapping" schema:"max=100000"`
}

type migrateApplyOut struct {
	applyOut
	TargetConformant *bool `json:"target_conformant,omitempty"`
}

func (o *Ops) previewV02Migration() registry.Operation {
	desc := "Preview migrating an OKF 0.1 bundle to 0.2: timestamp to generated.at, # Citations to sources and [^id] footnotes, okf_version in index.md. Invents no data."
	m := o.meta("preview_v02_migration", "Preview upgrading a bundle to OKF 0.2", desc, registry.EffectRead)
	m.Vocab.Enums["preview_status"] = []string{"applicable", "noop", "blocked"}
	return registry.Define(m, func(ctx context.Context, pin migratePreviewIn) (migratePreviewOut, error) {
		in := migrateIn{migratePreviewIn: pin}
		var out migratePreviewOut
		err := o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
			base, err := o.snapshot(b)
			if err != nil {
				return bundle.PathErr(err)
			}
			m, err := o.buildMigration(ctx, b, base, in)
			if err != nil {
				return err
			}
			out = m.preview()
			return nil
		})
		return out, err
	})
}

func (o *Ops) applyV02Migration() registry.Operation {
	desc := "Apply a previewed migration, bound by expected_source, proof and expected_plan_digest. An already-0.2 bundle takes expected_source only and is just validated."
	return registry.Define(o.meta("apply_v02_migration", "Upgrade a bundle to OKF 0.2", desc, registry.EffectUpdate),
		func(ctx context.Context, in migrateIn) (migrateApplyOut, error) {
			b, err := o.open(in.BundlePath)
			if err != nil {
				return migrateApplyOut{}, err
			}
			defer b.Close()
			req := in.request()
			reqDigest := plan.RequestDigest(migrationKind, req)
			if in.Proof != nil && in.ExpectedPlanDigest != "" {
				if in.Proof.Version != 2 || in.Proof.RequestDigest != reqDigest {
					return migrateApplyOut{}, domainerr.New(domainerr.PlanMismatch, "the proof does not belong to this request; preview again")
				}
				bind := binding{Kind: migrationKind, RequestDigest: reqDigest, ExpectedRevision: in.Proof.BaseRevision, ExpectedDigest: in.ExpectedPlanDigest}
				res, err := o.applyPlan(ctx, b, bind, func(base store.Manifest) (*plan.Plan, error) {
					m, err := o.buildMigration(ctx, b, base, in)
					if err != nil {
						return nil, err
					}
					if m.source != *in.ExpectedSource || m.status() != "applicable" || m.plan.ResultRevision != in.Proof.ResultRevision {
						return nil, nil
					}
					return m.plan, nil
				})
				if err == nil && res.Status == "replayed" && res.ResultRevision != in.Proof.ResultRevision {
					// Only the exact proof replays: its result revision is
					// the one the receipt committed.
					return migrateApplyOut{}, domainerr.New(domainerr.PlanMismatch, "the proof does not match the committed migration; preview again")
				}
				return migrateApplyOut{applyOut: res}, err
			}
			if in.Proof != nil || in.ExpectedPlanDigest != "" {
				return migrateApplyOut{}, domainerr.New(domainerr.InvalidArgument, "proof and expected_plan_digest go together; a target-noop apply takes neither")
			}
			return o.targetNoop(ctx, b, in)
		})
}

// targetNoop is the live target-noop branch: the bundle must already be
// 0.2 as expected_source says; it is validated and nothing is written,
// not even .okf/.
func (o *Ops) targetNoop(ctx context.Context, b *bundle.Bundle, in migrateIn) (migrateApplyOut, error) {
	lease, err := store.LockShared(ctx, b.Root)
	if err != nil {
		return migrateApplyOut{}, bundle.PathErr(err)
	}
	defer lease.Release()
	base, err := o.snapshot(b)
	if err != nil {
		return migrateApplyOut{}, bundle.PathErr(err)
	}
	m, err := o.buildMigration(ctx, b, base, in)
	if err != nil {
		return migrateApplyOut{}, err
	}
	if m.status() != "noop" {
		return migrateApplyOut{}, domainerr.New(domainerr.InvalidArgument,
			"the bundle still needs migrating: preview it and apply with the proof and plan digest")
	}
	if m.source != *in.ExpectedSource {
		return migrateApplyOut{}, domainerr.New(domainerr.PlanMismatch, "the bundle does not match expected_source; preview again")
	}
	rep, err := o.validate(ctx, b)
	if err != nil {
		return migrateApplyOut{}, err
	}
	ok := rep.Conformant && rep.Bundle.OKFVersion == "0.2"
	return migrateApplyOut{
		applyOut:         applyOut{Status: "noop", Actor: Actor, BaseRevision: base.Revision, ResultRevision: base.Revision, AffectedPaths: []string{}},
		TargetConformant: &ok,
	}, nil
}

// migration is a built migration plan with its findings.
type migration struct {
	plan   *plan.Plan
	source Source
	diags  []Diagnostic
	needs  []NeedsMapping
}

func (m *migration) status() string {
	switch {
	case hasErrors(m.diags):
		return "blocked"
	case m.plan.Noop():
		return "noop"
	}
	return "applicable"
}

func (m *migration) preview() migratePreviewOut {
	out := migratePreviewOut{previewOut: newPreview(m.plan, m.diags), ExpectedSource: m.source, NeedsMapping: m.needs}
	if out.NeedsMapping == nil {
		out.NeedsMapping = []NeedsMapping{}
	}
	out.Status = m.status()
	switch out.Status {
	case "applicable":
		out.PlanDigest, out.ResultRevision = m.plan.Digest, m.plan.ResultRevision
		out.Proof = &Proof{Version: 2, BaseRevision: m.plan.BaseRevision, RequestDigest: m.plan.RequestDigest, ResultRevision: m.plan.ResultRevision}
	case "blocked":
		out.AffectedPaths, out.Diff = []string{}, []FileDiff{}
	}
	return out
}

// buildMigration converts every legacy concept of the bundle as it is in
// base and sets okf_version in the root index.md.
func (o *Ops) buildMigration(ctx context.Context, b *bundle.Bundle, base store.Manifest, in migrateIn) (*migration, error) {
	req := in.request()
	m := &migration{}
	if !doc.ValidActor(req.GeneratedBy) {
		m.diags = append(m.diags, Diagnostic{Index: -1, Code: "bad_actor", Severity: "error", Message: "generated_by must follow the actor convention"})
	}
	mappings := map[string]CitationMapping{}
	for i, mp := range req.CitationMappings {
		key := mp.ConceptID + "\x00" + itoa(mp.Item)
		if _, dup := mappings[key]; dup {
			m.diags = append(m.diags, Diagnostic{Index: i, ConceptID: mp.ConceptID, Code: "duplicate_mapping", Severity: "error", Message: "two mappings name the same citation"})
		}
		mappings[key] = mp
	}
	files, err := b.Files(ctx)
	if err != nil {
		return nil, err
	}
	declared, ok, err := b.DeclaredVersion()
	if err != nil {
		return nil, err
	}
	var probe bundle.Probe
	var planFiles []plan.File
	var reads []string
	used := map[string]bool{}
	for _, f := range files {
		if f.ID == "" {
			continue
		}
		raw, err := o.readAt(b, base, f.Rel)
		if err != nil {
			return nil, err
		}
		d, perr := doc.Parse(raw, doc.DefaultLimits)
		if perr != nil {
			m.diags = append(m.diags, Diagnostic{Index: -1, ConceptID: f.ID, Code: "concept_unparseable", Severity: "error", Message: "the concept does not parse and cannot be migrated safely"})
			continue
		}
		probe.Add(d)
		legacy := d.Lookup("timestamp") != nil
		if _, has := findCitations(d.Body()); has {
			legacy = true
		}
		if !legacy {
			continue
		}
		m.source.LegacyConcepts++
		reads = append(reads, f.Rel)
		next, diags, needs := convertConcept(f.ID, d, req, mappings, used)
		m.diags, m.needs = append(m.diags, diags...), append(m.needs, needs...)
		if next != nil {
			planFiles = append(planFiles, plan.File{Path: f.Rel, Before: raw, After: next})
		}
	}
	for key, mp := range mappings {
		if !used[key] {
			m.diags = append(m.diags, Diagnostic{Index: -1, ConceptID: mp.ConceptID, Code: "unused_mapping", Severity: "error", Message: "a citation mapping names no legacy citation"})
		}
	}
	v := probe.Result(declared, ok)
	m.source.OKFVersion, m.source.Declared = v.OKFVersion, v.Declared
	if !(ok && declared == "0.2") {
		idx, err := o.readAt(b, base, "index.md")
		if err != nil {
			return nil, err
		}
		next, err := setBundleVersion(idx, "0.2")
		if err != nil {
			var oe *opError
			if !errors.As(err, &oe) {
				return nil, err
			}
			m.diags = append(m.diags, Diagnostic{Index: -1, Code: oe.code, Severity: "error", Message: oe.msg})
		} else {
			reads = append(reads, "index.md")
			planFiles = append(planFiles, plan.File{Path: "index.md", Before: idx, After: next})
		}
	}
	sort.Slice(m.diags, func(i, j int) bool { return m.diags[i].ConceptID < m.diags[j].ConceptID })
	m.plan = plan.New(migrationKind, plan.RequestDigest(migrationKind, req), base, reads, planFiles)
	return m, nil
}

// readAt reads a file (nil when absent) and checks it is the version the
// base manifest hashed.
func (o *Ops) readAt(b *bundle.Bundle, base store.Manifest, rel string) ([]byte, error) {
	raw, err := b.Root.ReadFile(rel, o.cfg.Limits.MaxFileBytes)
	switch {
	case safefs.IsCode(err, safefs.CodeNotFound):
		raw = nil
	case err != nil:
		return nil, bundle.PathErr(err)
	}
	sum := ""
	if raw != nil {
		sum = store.SHA256Hex(raw)
	}
	if sum != base.Lookup(rel) {
		return nil, domainerr.Retryable(domainerr.RevisionConflict, "the bundle changed while the plan was built; retry")
	}
	return raw, nil
}

// convertConcept migrates one legacy concept. It returns nil bytes when
// the concept is blocked.
func convertConcept(id string, d *doc.Document, req migrationRequest, mappings map[string]CitationMapping, used map[string]bool) ([]byte, []Diagnostic, []NeedsMapping) {
	var diags []Diagnostic
	var needs []NeedsMapping
	block := func(code, msg string) {
		diags = append(diags, Diagnostic{Index: -1, ConceptID: id, Code: code, Severity: "error", Message: msg})
	}
	e, err := edit.New(d)
	if err != nil {
		var ee *edit.Error
		errors.As(err, &ee)
		block(ee.Code, ee.Msg)
		return nil, diags, nil
	}
	pr := d.Project()
	if ts := d.Lookup("timestamp"); ts != nil {
		switch {
		case ts.Kind != yaml.ScalarNode || doc.ClassifyTemporal(ts.Value) != doc.TemporalInstant:
			block("timestamp_not_instant", "timestamp is not a datetime with an explicit offset; the migration never invents a time or offset")
		case pr.Generated != nil:
			diags = append(diags, Diagnostic{Index: -1, ConceptID: id, Code: "generated_kept", Severity: "info", Message: "the concept already has generated; it is kept"})
			if req.LegacyTimestamp == "remove" {
				err = e.DeleteKey("timestamp")
			}
		case req.LegacyTimestamp == "remove":
			err = e.ReplaceKey("timestamp", "generated", edit.Flow("by", req.GeneratedBy, "at", ts.Value))
		default:
			err = e.SetKey("generated", edit.Flow("by", req.GeneratedBy, "at", ts.Value))
		}
		if err != nil {
			var ee *edit.Error
			if errors.As(err, &ee) {
				block(ee.Code, ee.Msg)
			}
			return nil, diags, nil
		}
	}
	if sec, ok := findCitations(d.Body()); ok {
		if n := d.Lookup("sources"); n != nil && (n.Kind != yaml.SequenceNode || len(n.Content) != len(pr.Sources)) {
			block("bad_sources", "the existing sources are malformed; fix them before migrating")
			return nil, diags, nil
		}
		taken := map[string]bool{}
		byResource := map[string]string{}
		for _, s := range pr.Sources {
			taken[s.ID] = true
			byResource[s.Resource] = s.ID
		}
		var items []edit.Item
		for i := range pr.Sources {
			items = append(items, edit.KeepItem(i))
		}
		var notes []string
		labels := map[int]string{}
		blocked := false
		for i, c := range sec.items {
			key := id + "\x00" + itoa(i+1)
			var sid, res, title string
			if mp, ok := mappings[key]; ok {
				used[key] = true
				sid, res, title = mp.ID, mp.Resource, mp.Title
				if taken[sid] && byResource[res] != sid {
					block("duplicate_source_id", "a mapped id is already used by another source of the concept")
					blocked = true
					continue
				}
			} else if c.parsed {
				res, title = c.resource, c.title
				if existing, ok := byResource[res]; ok {
					sid = existing
				} else {
					sid = citationID(res, taken)
				}
			} else {
				needs = append(needs, NeedsMapping{ConceptID: id, Item: i + 1, Text: c.text})
				block("ambiguous_citation", "a citation is not a single URL or [title](URL); supply a citation_mappings entry")
				blocked = true
				continue
			}
			if _, exists := byResource[res]; !exists || byResource[res] != sid {
				taken[sid], byResource[res] = true, sid
				items = append(items, edit.NewItem(renderSource(doc.Source{ID: sid, Resource: res, Title: title})))
			}
			if c.label > 0 {
				labels[c.label] = sid
			}
			label := title
			if label == "" {
				label = res
			}
			notes = append(notes, "[^"+sid+"]: "+label+"\n")
		}
		if blocked {
			return nil, diags, needs
		}
		if err := e.SetSequence("sources", items, func(i int) string { return renderSource(pr.Sources[i]) }); err != nil {
			var ee *edit.Error
			errors.As(err, &ee)
			block(ee.Code, ee.Msg)
			return nil, diags, nil
		}
		body := string(d.Body())
		head, refs1 := replaceNumberedRefs(body[:sec.start], labels)
		tail, refs2 := replaceNumberedRefs(body[sec.end:], labels)
		if refs1+refs2 > 0 {
			diags = append(diags, Diagnostic{Index: -1, ConceptID: id, Code: "numbered_refs_keyed", Severity: "info",
				Message: "numbered [N] references were rewritten as keyed [^id] footnotes"})
		}
		if tail != "" && !strings.HasSuffix(strings.Join(notes, ""), "\n\n") {
			notes = append(notes, "\n")
		}
		if err := e.ReplaceBody(0, len(body), head+strings.Join(notes, "")+tail); err != nil {
			var ee *edit.Error
			errors.As(err, &ee)
			block(ee.Code, ee.Msg)
			return nil, diags, nil
		}
	}
	out, err := e.Bytes()
	if err != nil {
		block("internal_edit", "the edits could not be combined")
		return nil, diags, needs
	}
	if _, err := doc.Parse(out, doc.DefaultLimits); err != nil {
		block("result_invalid", "the migrated concept would not parse")
		return nil, diags, needs
	}
	return out, diags, needs
}
