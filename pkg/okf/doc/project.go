package doc

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Actorstamp is a `{ by, at }` pair as used by generated and verified.
type Actorstamp struct {
	By string `json:"by" jsonschema:"Actor (producer/version, human:<id> or process:<id>)." schema:"max=100000"`
	At string `json:"at,omitempty" jsonschema:"When, as written." schema:"max=100000"`
}

// Window is a `{ from, to }` range (usage_window), kept as raw text.
type Window struct {
	From string `json:"from,omitempty" schema:"max=100000"`
	To   string `json:"to,omitempty" schema:"max=100000"`
}

// Source is one sources[] entry.
type Source struct {
	ID           string  `json:"id,omitempty" schema:"max=100000"`
	Resource     string  `json:"resource" jsonschema:"URL, bundle path or scope; never fetched." schema:"max=100000"`
	Title        string  `json:"title,omitempty" schema:"max=100000"`
	Author       string  `json:"author,omitempty" schema:"max=100000"`
	UsageCount   *int64  `json:"usage_count,omitempty" schema:"min=-9007199254740992,max=9007199254740992"`
	LastModified string  `json:"last_modified,omitempty" schema:"max=100000"`
	UsageWindow  *Window `json:"usage_window,omitempty"`
}

// Parameter is one parameters[] entry of an Attested Computation.
type Parameter struct {
	Name     string `json:"name" schema:"max=100000"`
	Type     string `json:"type" schema:"max=100000"`
	Required bool   `json:"required"`
}

// ResourceRef is the shape of executor and attester.
type ResourceRef struct {
	Resource string   `json:"resource,omitempty" schema:"max=100000"`
	Receipt  []string `json:"receipt,omitempty" schema:"max=@receipts,itemmax=100000"`
}

// Trust tiers, derived from the verified strings (spec §5.3). A human:
// verifier is whatever the file's writer put there: any caller of
// write_concept or a patch can, and a read cannot tell an actual review
// from the string. So the tier says a human review is claimed, never that
// one took place (okf-mutation-trust-boundary.txt, verification).
const (
	TierUnverified         = "unverified"
	TierMachineConfirmed   = "machine-confirmed"
	TierHumanReviewClaimed = "claimed-human-review"
)

// TrustTiers lists every tier a projection may report.
var TrustTiers = []string{TierUnverified, TierMachineConfirmed, TierHumanReviewClaimed}

// Projection is the typed view of a concept's frontmatter. All values are
// raw scalar text as written in the document.
type Projection struct {
	Type            string       `json:"type" schema:"max=100000"`
	Title           string       `json:"title,omitempty" schema:"max=100000"`
	Description     string       `json:"description,omitempty" schema:"max=100000"`
	Resource        string       `json:"resource,omitempty" schema:"max=100000"`
	Tags            []string     `json:"tags,omitempty" schema:"max=10000,itemmax=100000"`
	Sources         []Source     `json:"sources,omitempty" schema:"max=10000"`
	UsageWindow     *Window      `json:"usage_window,omitempty"`
	Generated       *Actorstamp  `json:"generated,omitempty"`
	Verified        []Actorstamp `json:"verified,omitempty" schema:"max=10000"`
	TrustTier       string       `json:"trust_tier" schema:"enum=@trust_tier"`
	Status          string       `json:"status" schema:"max=100000"`
	StaleAfter      string       `json:"stale_after,omitempty" schema:"max=100000"`
	Runtime         string       `json:"runtime,omitempty" schema:"max=100000"`
	Parameters      []Parameter  `json:"parameters,omitempty" schema:"max=10000"`
	Computation     string       `json:"computation,omitempty" schema:"max=100000"`
	Executor        *ResourceRef `json:"executor,omitempty"`
	Attester        *ResourceRef `json:"attester,omitempty"`
	LegacyTimestamp string       `json:"legacy_timestamp,omitempty" schema:"max=100000"`
}

// Project builds the typed projection. It never fails: values of the wrong
// shape are left empty (and reported by Check). A bare verified mapping
// becomes a one-element list; verified entries without a usable `by` are
// dropped. Status defaults to "stable" when absent or not a scalar.
func (d *Document) Project() Projection {
	p := Projection{Status: "stable", TrustTier: TierUnverified}
	if d.root == nil {
		return p
	}
	p.Type, _ = text(d.Lookup("type"))
	p.Title, _ = text(d.Lookup("title"))
	p.Description, _ = text(d.Lookup("description"))
	p.Resource, _ = text(d.Lookup("resource"))
	p.Tags = textList(d.Lookup("tags"))
	p.Sources = projectSources(d.Lookup("sources"))
	p.UsageWindow = projectWindow(d.Lookup("usage_window"))
	if g := d.Lookup("generated"); g != nil && g.Kind == yaml.MappingNode {
		if a, ok := projectStamp(g); ok {
			p.Generated = &a
		}
	}
	p.Verified = projectVerified(d.Lookup("verified"))
	p.TrustTier = trustTier(p.Verified)
	if s, ok := text(d.Lookup("status")); ok {
		p.Status = s
	}
	p.StaleAfter, _ = text(d.Lookup("stale_after"))
	p.Runtime, _ = text(d.Lookup("runtime"))
	p.Parameters = projectParameters(d.Lookup("parameters"))
	p.Computation, _ = text(d.Lookup("computation"))
	p.Executor = projectRef(d.Lookup("executor"))
	p.Attester = projectRef(d.Lookup("attester"))
	p.LegacyTimestamp, _ = text(d.Lookup("timestamp"))
	return p
}

// text returns the raw text of a non-null scalar. Plain scalars that YAML
// would resolve to numbers, booleans or timestamps count as text; null and
// binary scalars, collections and absent nodes do not.
func text(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	switch n.ShortTag() {
	case "!!null", "!!binary":
		return "", false
	}
	return n.Value, true
}

// textList returns the items of a sequence of text scalars, skipping items
// of the wrong shape; nil when n is not a sequence.
func textList(n *yaml.Node) []string {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	var out []string
	for _, c := range n.Content {
		if s, ok := text(c); ok {
			out = append(out, s)
		}
	}
	return out
}

func projectSources(n *yaml.Node) []Source {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	var out []Source
	for _, e := range n.Content {
		if e.Kind != yaml.MappingNode {
			continue
		}
		var s Source
		s.ID, _ = text(mapGet(e, "id"))
		s.Resource, _ = text(mapGet(e, "resource"))
		s.Title, _ = text(mapGet(e, "title"))
		s.Author, _ = text(mapGet(e, "author"))
		if c, ok := yamlInt(mapGet(e, "usage_count")); ok {
			s.UsageCount = &c
		}
		s.LastModified, _ = text(mapGet(e, "last_modified"))
		s.UsageWindow = projectWindow(mapGet(e, "usage_window"))
		out = append(out, s)
	}
	return out
}

// yamlInt parses an integer scalar (decimal, 0x, 0o, 0b, underscores).
func yamlInt(n *yaml.Node) (int64, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, false
	}
	v := strings.ReplaceAll(n.Value, "_", "")
	if strings.HasPrefix(v, "0o") || strings.HasPrefix(v, "+0o") || strings.HasPrefix(v, "-0o") {
		v = strings.Replace(v, "0o", "0", 1)
	}
	i, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return 0, false
	}
	return i, true
}

func projectWindow(n *yaml.Node) *Window {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var w Window
	w.From, _ = text(mapGet(n, "from"))
	w.To, _ = text(mapGet(n, "to"))
	return &w
}

// projectStamp reads a { by, at } mapping; ok is false without a usable by.
func projectStamp(m *yaml.Node) (Actorstamp, bool) {
	by, ok := text(mapGet(m, "by"))
	if !ok || by == "" {
		return Actorstamp{}, false
	}
	at, _ := text(mapGet(m, "at"))
	return Actorstamp{By: by, At: at}, true
}

// verifiedEntries returns the verified entries as nodes with their paths,
// treating a bare mapping as a one-element list.
func verifiedEntries(n *yaml.Node) (nodes []*yaml.Node, paths []string) {
	switch {
	case n == nil:
		return nil, nil
	case n.Kind == yaml.MappingNode:
		return []*yaml.Node{n}, []string{"verified"}
	case n.Kind == yaml.SequenceNode:
		paths = make([]string, len(n.Content))
		for i := range n.Content {
			paths[i] = indexPath("verified", i)
		}
		return n.Content, paths
	}
	return nil, nil
}

func projectVerified(n *yaml.Node) []Actorstamp {
	nodes, _ := verifiedEntries(n)
	var out []Actorstamp
	for _, e := range nodes {
		if e.Kind != yaml.MappingNode {
			continue
		}
		if a, ok := projectStamp(e); ok {
			out = append(out, a)
		}
	}
	return out
}

func trustTier(v []Actorstamp) string {
	if len(v) == 0 {
		return TierUnverified
	}
	for _, a := range v {
		if strings.HasPrefix(a.By, "human:") {
			return TierHumanReviewClaimed
		}
	}
	return TierMachineConfirmed
}

func projectParameters(n *yaml.Node) []Parameter {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	var out []Parameter
	for _, e := range n.Content {
		if e.Kind != yaml.MappingNode {
			continue
		}
		var p Parameter
		p.Name, _ = text(mapGet(e, "name"))
		p.Type, _ = text(mapGet(e, "type"))
		p.Required, _ = yamlBool(mapGet(e, "required"))
		out = append(out, p)
	}
	return out
}

// yamlBool parses a boolean scalar.
func yamlBool(n *yaml.Node) (bool, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, false
	}
	switch strings.ToLower(n.Value) {
	case "true", "yes", "on", "y":
		return true, true
	case "false", "no", "off", "n":
		return false, true
	}
	return false, false
}

func projectRef(n *yaml.Node) *ResourceRef {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var r ResourceRef
	r.Resource, _ = text(mapGet(n, "resource"))
	r.Receipt = textList(mapGet(n, "receipt"))
	return &r
}

func indexPath(prefix string, i int) string {
	return prefix + "[" + strconv.Itoa(i) + "]"
}
