package okfops

import (
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
)

// The per-file views below are what the manifest cache (pkg/okf/filecache)
// keeps for the read operations: small, immutable, and holding no
// reference into the file's bytes (every string is cloned), so 10,000
// concepts stay within a few tens of MiB. A derive function returns an
// error instead of a view for a file that could not be read; such values
// are never cached.

// listView is a concept's list_concepts row (Stale is computed per call)
// and its contribution to the version probe.
type listView struct {
	row   ConceptSummary
	probe bundle.Probe
}

func deriveList(p bundle.Parsed) any {
	if err := scanFailure(p); err != nil {
		return err
	}
	v := &listView{row: summarize(p, time.Time{})}
	v.probe.Add(p.Doc)
	r := &v.row
	r.ID, r.Type, r.Title, r.Status = strings.Clone(r.ID), strings.Clone(r.Type), strings.Clone(r.Title), strings.Clone(r.Status)
	r.TrustTier, r.StaleAfter, r.GeneratedAt = strings.Clone(r.TrustTier), strings.Clone(r.StaleAfter), strings.Clone(r.GeneratedAt)
	return v
}

// checkView is a Markdown file's validate_bundle verdict.
type checkView struct {
	concept  bool
	probe    bundle.Probe
	problems []doc.Problem
}

func deriveCheck(p bundle.Parsed) any {
	if err := scanFailure(p); err != nil {
		return err
	}
	v := &checkView{concept: p.File.ID != ""}
	switch {
	case !v.concept:
		v.problems = checkReserved(p)
	case p.Err != nil:
		v.problems = []doc.Problem{{Code: parseCode(p.Err), Severity: "error", Message: p.Err.Error()}}
	default:
		v.probe.Add(p.Doc)
		v.problems = doc.Check(p.Doc)
	}
	for i := range v.problems {
		pr := &v.problems[i]
		pr.Code, pr.Field, pr.Message = strings.Clone(pr.Code), strings.Clone(pr.Field), strings.Clone(pr.Message)
	}
	return v
}

// searchView holds a concept's searchable fields; nil fields mean the
// concept does not parse.
type searchView struct {
	parsed                         bool
	title, description, tags, body string
}

func deriveSearch(p bundle.Parsed) any {
	if err := scanFailure(p); err != nil {
		return err
	}
	if p.Err != nil {
		return &searchView{}
	}
	pr := p.Doc.Project()
	return &searchView{parsed: true, title: strings.Clone(pr.Title), description: strings.Clone(pr.Description),
		tags: strings.Join(pr.Tags, ", "), body: string(p.Doc.Body())}
}

// linkView is the concepts a concept's body links to, in order, with the
// link text: get_neighbors' in-links.
type linkView struct {
	links []linkTo
}

type linkTo struct{ id, text string }

func deriveLinks(p bundle.Parsed) any {
	if err := scanFailure(p); err != nil {
		return err
	}
	v := &linkView{}
	if p.Err != nil {
		return v
	}
	for _, l := range doc.Links(p.Doc.Body()) {
		if id, ok := doc.ResolveConceptTarget(p.File.ID, l.Target); ok {
			v.links = append(v.links, linkTo{id: strings.Clone(id), text: strings.Clone(l.Text)})
		}
	}
	return v
}
