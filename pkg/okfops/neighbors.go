package okfops

import (
	"context"
	"strings"

	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/fcache"
	"github.com/notebridge/notebridge/pkg/registry"
	"github.com/notebridge/notebridge/pkg/schema"
)

type neighborsIn struct {
	BundlePath string `json:"bundle_path"`
	ConceptID  string `json:"concept_id"`
}

// OutLink is a link from the concept.
type OutLink struct {
	Text      string `json:"text"`
	Target    string `json:"target"`
	ConceptID string `json:"concept_id,omitempty"`
	Exists    bool   `json:"exists"`
	External  bool   `json:"external"`
}

// InLink is a link to the concept from another one.
type InLink struct {
	ConceptID string `json:"concept_id"`
	Text      string `json:"text"`
}

// SourceRef is one sources entry and where it leads in the bundle.
type SourceRef struct {
	ID        string `json:"id,omitempty"`
	Resource  string `json:"resource"`
	Title     string `json:"title,omitempty"`
	ConceptID string `json:"concept_id,omitempty"`
	Exists    bool   `json:"exists"`
}

type neighborsOut struct {
	ID          string      `json:"id"`
	Out         []OutLink   `json:"out"`
	In          []InLink    `json:"in"`
	InTruncated bool        `json:"in_truncated"`
	Sources     []SourceRef `json:"sources"`
}

func (o *Ops) getNeighbors() registry.Operation {
	maxHits := o.cfg.Limits.MaxHits
	in := schema.Object("", map[string]any{"bundle_path": bundlePathSchema, "concept_id": conceptIDSchema}, "bundle_path", "concept_id")
	out := schema.Object("", map[string]any{
		"id": conceptIDSchema,
		"out": schema.Array("Links in the body, in order.", schema.Object("", map[string]any{
			"text": text("Link text."), "target": text("Target as written."),
			"concept_id": text("Concept the target resolves to."),
			"exists":     schema.Bool("Whether that concept exists (broken links are allowed, spec §6.1)."),
			"external":   schema.Bool("Whether the target is a URL or a non-concept file (never fetched)."),
		}, "text", "target", "exists", "external"), 100_000),
		"in": schema.Array("Concepts linking here, in id order.", schema.Object("", map[string]any{
			"concept_id": conceptIDSchema, "text": text("Link text."),
		}, "concept_id", "text"), maxHits),
		"in_truncated": schema.Bool("Whether more concepts link here than were returned."),
		"sources": schema.Array("sources entries, with the concept each names when it is a bundle path.", schema.Object("", map[string]any{
			"id": text("Source id."), "resource": text("Resource as written (inert)."), "title": text(""),
			"concept_id": text("Concept the resource resolves to."), "exists": schema.Bool("Whether that concept exists."),
		}, "resource", "exists"), 10_000),
	}, "id", "out", "in", "in_truncated", "sources")
	desc := "A concept's graph neighbourhood: links out of its body, links into it (bounded) and its sources. Nothing is fetched."
	return o.op("get_neighbors", "OKF concept neighbours", desc, registry.EffectRead, in, out,
		registry.Func(func(ctx context.Context, in neighborsIn) (neighborsOut, error) {
			out := neighborsOut{ID: in.ConceptID, Out: []OutLink{}, In: []InLink{}, Sources: []SourceRef{}}
			err := o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
				d, _, err := b.ReadConcept(in.ConceptID)
				if err != nil {
					return err
				}
				files, err := b.Files(ctx)
				if err != nil {
					return err
				}
				exists := map[string]bool{}
				for _, f := range files {
					if f.ID != "" {
						exists[f.ID] = true
					}
				}
				for _, l := range doc.Links(d.Body()) {
					ol := OutLink{Text: l.Text, Target: l.Target, External: true}
					if id, ok := doc.ResolveConceptTarget(in.ConceptID, l.Target); ok {
						ol.ConceptID, ol.Exists, ol.External = id, exists[id], false
					}
					out.Out = append(out.Out, ol)
				}
				for _, s := range d.Project().Sources {
					out.Sources = append(out.Sources, resolveSource(in.ConceptID, s, exists))
				}
				return b.ScanCached(ctx, conceptsOnly(files), bundle.WholeFile, fcache.Links, deriveLinks, func(f bundle.File, v any) error {
					if err, ok := v.(error); ok {
						return err
					}
					if f.ID == in.ConceptID {
						return nil
					}
					for _, l := range v.(*linkView).links {
						if l.id == in.ConceptID {
							if len(out.In) == maxHits {
								out.InTruncated = true
								return errStopScan
							}
							out.In = append(out.In, InLink{ConceptID: f.ID, Text: l.text})
							break
						}
					}
					return nil
				})
			})
			if err == errStopScan {
				err = nil
			}
			return out, err
		}))
}

// resolveSource maps a source resource to a concept: first relative to the
// citing concept (spec §6.2), then, for producers that write bundle paths
// without the leading '/', from the root.
func resolveSource(from string, s doc.Source, exists map[string]bool) SourceRef {
	ref := SourceRef{ID: s.ID, Resource: s.Resource, Title: s.Title}
	id, ok := doc.ResolveConceptTarget(from, s.Resource)
	if !ok {
		return ref
	}
	if !exists[id] && !strings.HasPrefix(s.Resource, "/") && !strings.HasPrefix(s.Resource, ".") {
		if rid, rok := doc.ResolveConceptTarget(from, "/"+s.Resource); rok && exists[rid] {
			id = rid
		}
	}
	ref.ConceptID, ref.Exists = id, exists[id]
	return ref
}
