package okfops

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/fcache"
	"github.com/notebridge/notebridge/pkg/okf/store"
	"github.com/notebridge/notebridge/pkg/registry"
	"github.com/notebridge/notebridge/pkg/schema"
)

type listIn struct {
	BundlePath string `json:"bundle_path"`
	Prefix     string `json:"prefix"`
	Type       string `json:"type"`
	Limit      int    `json:"limit"`
	Offset     int    `json:"offset"`
}

// ConceptSummary is one row of list_concepts.
type ConceptSummary struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title,omitempty"`
	Status      string `json:"status"`
	TrustTier   string `json:"trust_tier"`
	Stale       bool   `json:"stale"`
	StaleAfter  string `json:"stale_after,omitempty"`
	GeneratedAt string `json:"generated_at,omitempty"`
	ParseError  string `json:"parse_error,omitempty"`
}

type listOut struct {
	Bundle     bundle.Version   `json:"bundle"`
	Concepts   []ConceptSummary `json:"concepts"`
	Total      int              `json:"total"`
	NextOffset int              `json:"next_offset"`
	HasMore    bool             `json:"has_more"`
}

var versionSchema = schema.Object("Resolved bundle format.", map[string]any{
	"okf_version":      schema.String("Declared okf_version, or the probe's verdict (0.1 or 0.2).", 0, 32),
	"declared":         schema.Bool("Whether the root index.md declares okf_version."),
	"temporal_profile": schema.Enum("Profile of the date-or-instant fields.", "date", "instant", "mixed", "none"),
}, "okf_version", "declared", "temporal_profile")

func (o *Ops) listConcepts() registry.Operation {
	in := schema.Object("", map[string]any{
		"bundle_path": bundlePathSchema,
		"prefix":      schema.String("Id prefix, e.g. tables/.", 0, bundle.MaxConceptIDBytes),
		"type":        schema.String("Exact type.", 0, 200),
		"limit":       schema.Default(schema.Integer("", 1, 1000), 200),
		"offset":      schema.Integer("", 0, 1_000_000),
	}, "bundle_path")
	row := schema.Object("", map[string]any{
		"id":           conceptIDSchema,
		"type":         schema.String("Concept type; empty when missing.", 0, 10_000),
		"title":        schema.String("", 0, 10_000),
		"status":       schema.String("Lifecycle status (stable when absent).", 0, 10_000),
		"trust_tier":   schema.Enum(trustTierDesc, doc.TrustTiers...),
		"stale":        schema.Bool("Whether now is on or after stale_after."),
		"stale_after":  schema.String("stale_after as written.", 0, 100),
		"generated_at": schema.String("generated.at, or a legacy timestamp.", 0, 100),
		"parse_error":  schema.String("Stable code when the document could not be parsed.", 0, 64),
	}, "id", "type", "status", "trust_tier", "stale")
	out := schema.Object("", map[string]any{
		"bundle":      versionSchema,
		"concepts":    schema.Array("Concepts in id order.", row, 1000),
		"total":       schema.Integer("Concepts matching the filters.", 0, 1_000_000),
		"next_offset": schema.Integer("Offset of the next page.", 0, 1_000_000),
		"has_more":    schema.Bool("Whether more concepts follow."),
	}, "bundle", "concepts", "total", "next_offset", "has_more")
	desc := "List a bundle's concepts (type, title, status, trust tier, staleness, generated time) from frontmatter only, paged by offset."
	return o.op("list_concepts", "List OKF concepts", desc, registry.EffectRead, in, out,
		registry.Func(func(ctx context.Context, in listIn) (listOut, error) {
			if in.Limit == 0 {
				in.Limit = 200
			}
			var out listOut
			err := o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
				files, err := b.Files(ctx)
				if err != nil {
					return err
				}
				declared, ok, err := b.DeclaredVersion()
				if err != nil {
					return err
				}
				var probe bundle.Probe
				now := time.Now()
				out.Concepts = []ConceptSummary{}
				err = b.ScanCached(ctx, conceptsOnly(files), bundle.FrontmatterOnly, fcache.Summary, deriveList, func(f bundle.File, v any) error {
					if err, ok := v.(error); ok {
						return err
					}
					lv := v.(*listView)
					probe.Merge(lv.probe)
					if !strings.HasPrefix(f.ID, in.Prefix) {
						return nil
					}
					row := lv.row
					row.Stale = row.ParseError == "" && isStale(row.StaleAfter, now)
					if in.Type != "" && row.Type != in.Type {
						return nil
					}
					if out.Total >= in.Offset && len(out.Concepts) < in.Limit {
						out.Concepts = append(out.Concepts, row)
					}
					out.Total++
					return nil
				})
				out.Bundle = probe.Result(declared, ok)
				return err
			})
			if err != nil {
				return listOut{}, err
			}
			out.NextOffset = min(in.Offset+len(out.Concepts), out.Total)
			out.HasMore = out.NextOffset < out.Total
			return out, nil
		}))
}

// conceptsOnly keeps the concept files of a listing.
func conceptsOnly(files []bundle.File) []bundle.File {
	out := make([]bundle.File, 0, len(files))
	for _, f := range files {
		if f.ID != "" {
			out = append(out, f)
		}
	}
	return out
}

// scanFailure turns a file that could not be read at all (as opposed to
// one that does not parse) into the scan's error.
func scanFailure(p bundle.Parsed) error {
	if p.Err == nil {
		return nil
	}
	var pe *doc.ParseError
	if errors.As(p.Err, &pe) {
		return nil
	}
	return p.Err
}

func parseCode(err error) string {
	var pe *doc.ParseError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func summarize(p bundle.Parsed, now time.Time) ConceptSummary {
	row := ConceptSummary{ID: p.File.ID, Status: "stable", TrustTier: "unverified"}
	if p.Err != nil {
		row.ParseError = parseCode(p.Err)
		return row
	}
	pr := p.Doc.Project()
	row.Type, row.Title, row.Status, row.TrustTier = pr.Type, pr.Title, pr.Status, pr.TrustTier
	row.StaleAfter = pr.StaleAfter
	row.Stale = isStale(pr.StaleAfter, now)
	if pr.Generated != nil {
		row.GeneratedAt = pr.Generated.At
	} else {
		row.GeneratedAt = pr.LegacyTimestamp
	}
	return row
}

// isStale applies §5.5: stale when now (or today, for a date) is on or
// after stale_after. An unparseable value is not stale; validation reports it.
func isStale(v string, now time.Time) bool {
	switch doc.ClassifyTemporal(v) {
	case doc.TemporalDate:
		return now.UTC().Format(time.DateOnly) >= v
	case doc.TemporalInstant:
		t, err := time.Parse(time.RFC3339Nano, v)
		return err == nil && !now.Before(t)
	}
	return false
}

type readIn struct {
	BundlePath string `json:"bundle_path"`
	ConceptID  string `json:"concept_id"`
}

// LegacyFallbacks are the v0.1 forms a v0.2 reader may fall back to.
type LegacyFallbacks struct {
	Timestamp string   `json:"timestamp,omitempty"`
	Citations []string `json:"citations,omitempty"`
}

type readOut struct {
	ID             string              `json:"id"`
	SHA256         string              `json:"sha256"`
	Bytes          int                 `json:"bytes"`
	HasFrontmatter bool                `json:"has_frontmatter"`
	Frontmatter    string              `json:"frontmatter"`
	Body           string              `json:"body"`
	Projection     *doc.Projection     `json:"projection,omitempty"`
	Temporal       []doc.TemporalField `json:"temporal"`
	Legacy         LegacyFallbacks     `json:"legacy"`
	Problems       []doc.Problem       `json:"problems"`
}

func (o *Ops) readConcept() registry.Operation {
	in := schema.Object("", map[string]any{"bundle_path": bundlePathSchema, "concept_id": conceptIDSchema}, "bundle_path", "concept_id")
	out := schema.Object("", map[string]any{
		"id":              conceptIDSchema,
		"sha256":          schema.String("SHA-256 of the file's bytes.", 64, 64),
		"bytes":           schema.Integer("File size.", 0, 1<<40),
		"has_frontmatter": schema.Bool("Whether the file starts with a frontmatter block."),
		"frontmatter":     schema.String("The frontmatter YAML exactly as written.", 0, 1<<30),
		"body":            schema.String("The Markdown body exactly as written (the whole file when it does not parse).", 0, 1<<30),
		"projection":      projectionSchema,
		"temporal":        schema.Array("Profile-dependent date-or-instant fields.", temporalFieldSchema, 100_000),
		"legacy":          legacySchema,
		"problems":        schema.Array("Conformance errors and warnings.", problemSchema, 100_000),
	}, "id", "sha256", "bytes", "has_frontmatter", "frontmatter", "body", "temporal", "legacy", "problems")
	desc := "Read one concept: frontmatter and body byte-exact, a typed projection, legacy v0.1 fallbacks and conformance problems."
	return o.op("read_concept", "Read an OKF concept", desc, registry.EffectRead, in, out,
		registry.Func(func(ctx context.Context, in readIn) (readOut, error) {
			var out readOut
			err := o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
				d, raw, err := b.ReadConcept(in.ConceptID)
				if raw == nil {
					return err
				}
				out = readOut{ID: in.ConceptID, SHA256: store.SHA256Hex(raw), Bytes: len(raw),
					Temporal: []doc.TemporalField{}, Problems: []doc.Problem{}}
				if err != nil {
					out.Body = string(raw)
					out.Problems = append(out.Problems, doc.Problem{Code: parseCode(err), Severity: "error", Message: err.Error()})
					return nil
				}
				out.HasFrontmatter = d.HasFrontmatter()
				out.Frontmatter, out.Body = string(d.Frontmatter()), string(d.Body())
				pr := d.Project()
				out.Projection = &pr
				out.Temporal = append(out.Temporal, d.ProfileFields()...)
				out.Problems = append(out.Problems, doc.Check(d)...)
				out.Legacy = LegacyFallbacks{Timestamp: pr.LegacyTimestamp, Citations: doc.LegacyCitations(d.Body())}
				return nil
			})
			return out, err
		}))
}
