package okfops

import (
	"context"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
)

type neighborsIn struct {
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
	ConceptID  string `json:"concept_id" schema:"min=1,max=@concept_id"`
}

// OutLink is a link from the concept.
type OutLink struct {
	Text      string `json:"text" schema:"max=100000"`
	Target    string `json:"target" schema:"max=100000"`
	ConceptID string `json:"concept_id,omitempty" schema:"max=100000"`
	Exists    bool   `json:"exists"`
	External  bool   `json:"external"`
}

// InLink is a link to the concept from another one.
type InLink struct {
	ConceptID string `json:"concept_id" schema:"min=1,max=@concept_id"`
	Text      string `json:"text" schema:"max=100000"`
}

// SourceRef is one sources entry and where it leads in the bundle.
type SourceRef struct {
	ID        string `json:"id,omitempty" schema:"max=100000"`
	Resource  string `json:"resource" schema:"max=100000"`
	Title     string `json:"title,omitempty" schema:"max=100000"`
	ConceptID string `json:"concept_id,omitempty" schema:"max=100000"`
	Exists    bool   `json:"exists"`
}

type neighborsOut struct {
	ID          string      `json:"id" schema:"min=1,max=@concept_id"`
	Out         []OutLink   `json:"out" schema:"max=100000"`
	In          []InLink    `json:"in" schema:"max=@max_hits"`
	InTruncated bool        `json:"in_truncated"`
	Sources     []SourceRef `json:"sources" schema:"max=10000"`
}

func (o *Ops) getNeighbors() registry.Operation {
	maxHits := o.cfg.Limits.MaxHits
	desc := "A concept's graph neighbourhood: links out of its body, links into it (bounded) and its sources. Nothing is fetched."
	return registry.Define(o.meta("get_neighbors", "Find linked concepts", desc, registry.EffectRead),
		func(ctx context.Context, in neighborsIn) (neighborsOut, error) {
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
				return b.ScanCached(ctx, conceptsOnly(files), bundle.WholeFile, filecache.Links, deriveLinks, func(f bundle.File, v any) error {
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
		})
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
