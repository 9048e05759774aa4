package okfops

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

type listIn struct {
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
	Prefix     string `json:"prefix,omitempty" jsonschema:"Id prefix, e.g. tables/." schema:"max=@concept_id"`
	Type       string `json:"type,omitempty" jsonschema:"Exact type." schema:"max=200"`
	Limit      int    `json:"limit,omitempty" schema:"min=1,max=1000,default=200"`
	Offset     int    `json:"offset,omitempty" schema:"min=0,max=1000000"`
}

// ConceptSummary is one row of list_concepts.
type ConceptSummary struct {
	ID          string `json:"id" schema:"min=1,max=@concept_id"`
	Type        string `json:"type" schema:"max=10000"`
	Title       string `json:"title,omitempty" schema:"max=10000"`
	Status      string `json:"status" schema:"max=10000"`
	TrustTier   string `json:"trust_tier" schema:"enum=@trust_tier"`
	Stale       bool   `json:"stale"`
	StaleAfter  string `json:"stale_after,omitempty" schema:"max=100"`
	GeneratedAt string `json:"generated_at,omitempty" schema:"max=100"`
	ParseError  string `json:"parse_error,omitempty" schema:"max=64"`
}

type listOut struct {
	Bundle     bundle.Version   `json:"bundle"`
	Concepts   []ConceptSummary `json:"concepts" schema:"max=1000"`
	Total      int              `json:"total" schema:"min=0,max=1000000"`
	NextOffset int              `json:"next_offset" schema:"min=0,max=1000000"`
	HasMore    bool             `json:"has_more"`
}

func (o *Ops) listConcepts() registry.Operation {
	desc := "List a bundle's concepts (type, title, status, trust tier, staleness, generated time) from frontmatter only, paged by offset."
	return registry.Define(o.meta("list_concepts", "List knowledge concepts", desc, registry.EffectRead),
		func(ctx context.Context, in listIn) (listOut, error) {
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
				err = b.ScanCached(ctx, conceptsOnly(files), bundle.FrontmatterOnly, filecache.Summary, deriveList, func(f bundle.File, v any) error {
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
		})
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
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
	ConceptID  string `json:"concept_id" schema:"min=1,max=@concept_id"`
}

// LegacyFallbacks are the v0.1 forms a v0.2 reader may fall back to.
type LegacyFallbacks struct {
	Timestamp string   `json:"timestamp,omitempty" schema:"max=100000"`
	Citations []string `json:"citations,omitempty" schema:"max=10000,itemmax=100000"`
}

type readOut struct {
	ID             string              `json:"id" schema:"min=1,max=@concept_id"`
	SHA256         string              `json:"sha256" schema:"min=64,max=64"`
	Bytes          int                 `json:"bytes" schema:"min=0,max=1099511627776"`
	HasFrontmatter bool                `json:"has_frontmatter"`
	Frontmatter    string              `json:"frontmatter" schema:"max=1073741824"`
	Body           string              `json:"body" schema:"max=1073741824"`
	Projection     *doc.Projection     `json:"projection,omitempty"`
	Temporal       []doc.TemporalField `json:"temporal" schema:"max=100000"`
	Legacy         LegacyFallbacks     `json:"legacy"`
	Problems       []doc.Problem       `json:"problems" schema:"max=100000"`
}

func (o *Ops) readConcept() registry.Operation {
	desc := "Read one concept: frontmatter and body byte-exact, a typed projection, legacy v0.1 fallbacks and conformance problems."
	return registry.Define(o.meta("read_concept", "Read a knowledge concept", desc, registry.EffectRead),
		func(ctx context.Context, in readIn) (readOut, error) {
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
		})
}
