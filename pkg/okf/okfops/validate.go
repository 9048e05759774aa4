package okfops

import (
	"context"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

type validateIn struct {
	BundlePath string `json:"bundle_path" schema:"min=1,max=4096"`
}

// FileProblem is a problem located in one file.
type FileProblem struct {
	Path string `json:"path" schema:"max=100000"`
	doc.Problem
}

type validateOut struct {
	Bundle         bundle.Version `json:"bundle"`
	Conformant     bool           `json:"conformant"`
	Files          int            `json:"files" schema:"min=0,max=1000000"`
	Concepts       int            `json:"concepts" schema:"min=0,max=1000000"`
	Errors         int            `json:"errors" schema:"min=0,max=1099511627776"`
	Warnings       int            `json:"warnings" schema:"min=0,max=1099511627776"`
	Problems       []FileProblem  `json:"problems" schema:"max=@max_problems"`
	Truncated      bool           `json:"truncated"`
	JournalPending bool           `json:"journal_pending"`
}

func (o *Ops) validateBundle() registry.Operation {
	desc := "Check a bundle against OKF conformance and the provenance, trust, lifecycle and computation families; problems are reported as data."
	return registry.Define(o.meta("validate_bundle", "Check a knowledge bundle", desc, registry.EffectRead),
		func(ctx context.Context, in validateIn) (validateOut, error) {
			var out validateOut
			err := o.readLocked(ctx, in.BundlePath, func(b *bundle.Bundle) error {
				var err error
				out, err = o.validate(ctx, b)
				return err
			})
			return out, err
		})
}

// validate builds the conformance report of an open bundle.
func (o *Ops) validate(ctx context.Context, b *bundle.Bundle) (validateOut, error) {
	maxProblems := o.cfg.Limits.MaxProblems
	out := validateOut{Problems: []FileProblem{}}
	add := func(path string, p doc.Problem) {
		if p.Severity == "error" {
			out.Errors++
		} else {
			out.Warnings++
		}
		if len(out.Problems) < maxProblems {
			out.Problems = append(out.Problems, FileProblem{Path: path, Problem: p})
		} else {
			out.Truncated = true
		}
	}
	pending, err := store.JournalPending(b.Root)
	if err != nil {
		return out, bundle.PathErr(err)
	}
	out.JournalPending = pending
	files, err := b.Files(ctx)
	if err != nil {
		return out, err
	}
	out.Files = len(files)
	declared, ok, err := b.DeclaredVersion()
	if err != nil {
		return out, err
	}
	var probe bundle.Probe
	err = b.ScanCached(ctx, markdown(files), bundle.WholeFile, filecache.Problems, deriveCheck, func(f bundle.File, v any) error {
		if err, ok := v.(error); ok {
			return err
		}
		cv := v.(*checkView)
		if cv.concept {
			out.Concepts++
		}
		probe.Merge(cv.probe)
		for _, pr := range cv.problems {
			add(f.Rel, pr)
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	out.Bundle = probe.Result(declared, ok)
	if out.Bundle.TemporalProfile == "mixed" {
		add("", doc.Problem{Code: "temporal_profile_mixed", Severity: "warning",
			Message: "the bundle mixes calendar dates and instants in profile-dependent fields"})
	}
	if ok && declared != "0.1" && declared != "0.2" {
		add("index.md", doc.Problem{Code: "unknown_okf_version", Severity: "warning", Field: "okf_version",
			Message: "the declared okf_version is not one this server knows; read best-effort"})
	}
	if pending {
		add(".okf/journal", doc.Problem{Code: "commit_pending", Severity: "warning",
			Message: "an interrupted commit awaits recovery; the next write completes or refuses it"})
	}
	out.Conformant = out.Errors == 0
	return out, nil
}

// markdown keeps the .md files of a listing: concepts and reserved files.
func markdown(files []bundle.File) []bundle.File {
	out := make([]bundle.File, 0, len(files))
	for _, f := range files {
		if strings.HasSuffix(f.Rel, ".md") {
			out = append(out, f)
		}
	}
	return out
}

// checkReserved applies §8 and §9 to index.md and log.md: index files carry
// no frontmatter except okf_version at the root. A hidden or otherwise
// non-concept .md file reaches here too and is ignored.
func checkReserved(p bundle.Parsed) []doc.Problem {
	name := p.File.Rel[strings.LastIndexByte(p.File.Rel, '/')+1:]
	if p.Err != nil {
		return []doc.Problem{{Code: parseCode(p.Err), Severity: "error", Message: p.Err.Error()}}
	}
	if !p.Doc.HasFrontmatter() {
		return nil
	}
	switch strings.ToLower(name) {
	case "index.md":
		if p.File.Rel == "index.md" {
			for _, k := range p.Doc.Keys() {
				if k != "okf_version" {
					return []doc.Problem{{Code: "index_frontmatter_key", Severity: "error", Field: k,
						Message: "the root index.md may carry only okf_version in its frontmatter"}}
				}
			}
			return nil
		}
		return []doc.Problem{{Code: "index_has_frontmatter", Severity: "error",
			Message: "only the root index.md may carry frontmatter"}}
	case "log.md":
		return []doc.Problem{{Code: "log_has_frontmatter", Severity: "warning",
			Message: "log files are a flat list of dated entries; frontmatter is not part of §9"}}
	}
	return nil
}
