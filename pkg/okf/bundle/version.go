package bundle

import (
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"go.yaml.in/yaml/v3"
)

// Version is the resolved format of a bundle.
type Version struct {
	// OKFVersion is the declared okf_version, else the probe's verdict:
	// "0.1" when legacy keys (timestamp, # Citations) appear without any
	// v0.2 family, otherwise "0.2".
	OKFVersion string `json:"okf_version" schema:"max=32"`
	Declared   bool   `json:"declared"`
	// TemporalProfile is "date", "instant", "mixed" or "none", from the
	// profile-dependent fields (stale_after, usage_window, sources dates).
	TemporalProfile string `json:"temporal_profile" schema:"enum=date|instant|mixed|none"`
}

// DeclaredVersion reads okf_version from the root index.md frontmatter.
// It reads that one file only.
func (b *Bundle) DeclaredVersion() (string, bool, error) {
	raw, err := b.Root.ReadFile("index.md", b.Limits.MaxFileBytes)
	if err != nil {
		if safefs.IsCode(err, safefs.CodeNotFound) {
			return "", false, nil
		}
		return "", false, PathErr(err)
	}
	d, err := doc.Parse(raw, b.Limits.Doc())
	if err != nil || !d.HasFrontmatter() {
		return "", false, nil
	}
	n := d.Lookup("okf_version")
	if n == nil || n.Kind != yaml.ScalarNode || n.Value == "" {
		return "", false, nil
	}
	return n.Value, true, nil
}

// Probe accumulates version and profile evidence over a scan.
type Probe struct {
	legacy, modern int
	date, instant  int
}

// modernKeys are the v0.2 families (§13.2).
var modernKeys = []string{"generated", "verified", "sources", "usage_window", "status", "stale_after", "runtime", "parameters", "executor", "attester", "computation"}

// Add records one parsed concept.
func (p *Probe) Add(d *doc.Document) {
	if d == nil || !d.HasFrontmatter() {
		return
	}
	for _, k := range modernKeys {
		if d.Lookup(k) != nil {
			p.modern++
			break
		}
	}
	if d.Lookup("timestamp") != nil {
		p.legacy++
	} else if !d.BodyOmitted() && len(doc.LegacyCitations(d.Body())) > 0 {
		p.legacy++
	}
	for _, f := range d.ProfileFields() {
		switch f.Kind {
		case doc.TemporalDate:
			p.date++
		case doc.TemporalInstant:
			p.instant++
		}
	}
}

// Result resolves the version, preferring a declaration.
func (p *Probe) Result(declared string, ok bool) Version {
	v := Version{OKFVersion: "0.2", Declared: ok, TemporalProfile: "none"}
	switch {
	case ok:
		v.OKFVersion = declared
	case p.legacy > 0 && p.modern == 0:
		v.OKFVersion = "0.1"
	}
	switch {
	case p.date > 0 && p.instant > 0:
		v.TemporalProfile = "mixed"
	case p.date > 0:
		v.TemporalProfile = "date"
	case p.instant > 0:
		v.TemporalProfile = "instant"
	}
	return v
}

// Merge adds the counts of q, which probed other concepts.
func (p *Probe) Merge(q Probe) {
	p.legacy += q.legacy
	p.modern += q.modern
	p.date += q.date
	p.instant += q.instant
}
