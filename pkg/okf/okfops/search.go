package okfops

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
)

type searchIn struct {
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
	Query      string `json:"query" jsonschema:"Literal, case-insensitive." schema:"min=1,max=500"`
	Limit      int    `json:"limit,omitempty" schema:"min=1,max=@max_hits,default=@default_hits"`
}

// SearchHit is one search_concepts match.
type SearchHit struct {
	ID      string `json:"id" schema:"min=1,max=@concept_id"`
	Title   string `json:"title,omitempty" schema:"max=100000"`
	Field   string `json:"field" schema:"enum=id|title|description|tags|body"`
	Snippet string `json:"snippet" schema:"max=1000"`
}

type searchOut struct {
	Hits        []SearchHit `json:"hits" schema:"max=@max_hits"`
	Scanned     int         `json:"scanned" schema:"min=0,max=1000000"`
	Unparseable int         `json:"unparseable" schema:"min=0,max=1000000"`
	Truncated   bool        `json:"truncated"`
}

func (o *Ops) searchConcepts() registry.Operation {
	defaultHits := min(50, o.cfg.Limits.MaxHits)
	desc := "Search concept ids, titles, descriptions, tags and bodies for literal text, case-insensitively, with bounded hits."
	return registry.Define(o.meta("search_concepts", "Search knowledge concepts", desc, registry.EffectRead),
		func(ctx context.Context, in searchIn) (searchOut, error) {
			if in.Limit == 0 {
				in.Limit = defaultHits
			}
			needle := strings.ToLower(in.Query)
			out := searchOut{Hits: []SearchHit{}}
			err := o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
				files, err := b.Files(ctx)
				if err != nil {
					return err
				}
				return b.ScanCached(ctx, conceptsOnly(files), bundle.WholeFile, filecache.Searchable, deriveSearch, func(f bundle.File, v any) error {
					if err, ok := v.(error); ok {
						return err
					}
					sv := v.(*searchView)
					out.Scanned++
					if !sv.parsed {
						out.Unparseable++
						return nil
					}
					h, ok := match(f.ID, sv, needle)
					if !ok {
						return nil
					}
					if len(out.Hits) == in.Limit {
						out.Truncated = true
						return errStopScan
					}
					out.Hits = append(out.Hits, h)
					return nil
				})
			})
			if err == errStopScan {
				err = nil
			}
			return out, err
		})
}

type stopScan struct{}

func (stopScan) Error() string { return "stop scan" }

var errStopScan error = stopScan{}

// match finds needle (already lower-cased) in the searchable fields.
func match(id string, sv *searchView, needle string) (SearchHit, bool) {
	h := SearchHit{ID: id, Title: sv.title}
	fields := []struct{ name, value string }{
		{"id", id}, {"title", sv.title}, {"description", sv.description},
		{"tags", sv.tags}, {"body", sv.body},
	}
	for _, f := range fields {
		if i := strings.Index(strings.ToLower(f.value), needle); i >= 0 {
			h.Field = f.name
			h.Snippet = snippet(f.value, i, len(needle))
			return h, true
		}
	}
	return SearchHit{}, false
}

// snippet returns up to ~160 bytes around [i, i+n) of s on one line. The
// index comes from the lower-cased copy, whose byte offsets can drift from
// s for a few scripts, so it is clamped and aligned to rune starts.
func snippet(s string, i, n int) string {
	start, end := max(0, i-70), min(len(s), i+n+70)
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	out := strings.Join(strings.Fields(s[start:end]), " ")
	if len(out) > 1000 {
		out = out[:1000]
		for !utf8.ValidString(out) {
			out = out[:len(out)-1]
		}
	}
	return out
}
