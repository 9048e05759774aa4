package doc

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Severity grades a Problem.
type Severity string

// Severities: errors make a concept non-conformant (spec §11); warnings are
// soft guidance that consumers must not reject a document for.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding of Check. Message is fixed text that never echoes
// document values; Field names the frontmatter path when there is one.
type Problem struct {
	Code     string   `json:"code" schema:"min=1,max=64"`
	Severity Severity `json:"severity" schema:"enum=error|warning"`
	Field    string   `json:"field,omitempty" schema:"max=100000"`
	Message  string   `json:"message" schema:"max=100000"`
}

// Attested Computation type name (spec §10).
const TypeAttestedComputation = "Attested Computation"

type problems []Problem

func (ps *problems) err(code, field, msg string) {
	*ps = append(*ps, Problem{Code: code, Severity: SeverityError, Field: field, Message: msg})
}

func (ps *problems) warn(code, field, msg string) {
	*ps = append(*ps, Problem{Code: code, Severity: SeverityWarning, Field: field, Message: msg})
}

// Check reports problems for a concept document (not index.md or log.md).
//
// Errors: missing_frontmatter, missing_type. Warnings: bad_title,
// bad_description, bad_resource, bad_tags, bad_sources,
// source_missing_resource, duplicate_source_id, bad_generated, bad_verified,
// bad_actor, bad_status, bad_temporal, mixed_temporal_profile,
// legacy_timestamp, legacy_citations, attested_missing_runtime, bad_runtime,
// bad_parameters, bad_computation, bad_executor, bad_attester,
// unknown_footnote. Body checks are skipped when the body was omitted.
func Check(d *Document) []Problem {
	var ps problems
	if !d.HasFrontmatter() {
		ps.err("missing_frontmatter", "", "document has no YAML frontmatter block")
		return ps
	}
	typ, ok := text(d.Lookup("type"))
	if !ok || strings.TrimSpace(typ) == "" {
		ps.err("missing_type", "type", "frontmatter has no non-empty string type")
	}
	for _, k := range [...]string{"title", "description", "resource"} {
		if n := d.Lookup(k); n != nil {
			if _, ok := text(n); !ok {
				ps.warn("bad_"+k, k, k+" is not a string")
			}
		}
	}
	if n := d.Lookup("tags"); n != nil && !isTextList(n) {
		ps.warn("bad_tags", "tags", "tags is not a list of strings")
	}
	ids := checkSources(&ps, d.Lookup("sources"))
	checkGenerated(&ps, d.Lookup("generated"))
	checkVerified(&ps, d.Lookup("verified"))
	if n := d.Lookup("status"); n != nil {
		switch s, _ := text(n); s {
		case "draft", "stable", "deprecated":
		default:
			ps.warn("bad_status", "status", "status is not one of draft, stable, deprecated")
		}
	}
	checkProfile(&ps, d.ProfileFields())
	if d.Lookup("timestamp") != nil {
		ps.warn("legacy_timestamp", "timestamp", "v0.1 timestamp is superseded by generated.at")
	}
	checkComputation(&ps, d, typ)
	if !d.bodyOmitted {
		body := d.Body()
		if hasLegacyCitations(body) {
			ps.warn("legacy_citations", "", "body has a v0.1 Citations section; use sources")
		}
		refs, _ := FootnoteLabels(body)
		for _, r := range refs {
			if _, ok := ids[r]; !ok {
				ps.warn("unknown_footnote", "sources", "footnote reference has no matching sources[].id")
			}
		}
	}
	return ps
}

func isTextList(n *yaml.Node) bool {
	if n.Kind != yaml.SequenceNode {
		return false
	}
	for _, c := range n.Content {
		if _, ok := text(c); !ok {
			return false
		}
	}
	return true
}

// checkSources validates sources and returns the set of declared ids.
func checkSources(ps *problems, n *yaml.Node) map[string]struct{} {
	ids := map[string]struct{}{}
	if n == nil {
		return ids
	}
	if n.Kind != yaml.SequenceNode {
		ps.warn("bad_sources", "sources", "sources is not a list of mappings")
		return ids
	}
	for i, e := range n.Content {
		p := indexPath("sources", i)
		if e.Kind != yaml.MappingNode {
			ps.warn("bad_sources", p, "sources entry is not a mapping")
			continue
		}
		if r, ok := text(mapGet(e, "resource")); !ok || strings.TrimSpace(r) == "" {
			ps.warn("source_missing_resource", p+".resource", "sources entry has no resource")
		}
		if idn := mapGet(e, "id"); idn != nil {
			id, ok := text(idn)
			switch {
			case !ok || id == "":
				ps.warn("bad_sources", p+".id", "sources entry id is not a non-empty string")
			default:
				if _, dup := ids[id]; dup {
					ps.warn("duplicate_source_id", p+".id", "sources entry id is already used by an earlier entry")
				}
				ids[id] = struct{}{}
			}
		}
		if t := mapGet(e, "title"); t != nil {
			if _, ok := text(t); !ok {
				ps.warn("bad_sources", p+".title", "sources entry title is not a string")
			}
		}
		if a := mapGet(e, "author"); a != nil {
			s, ok := text(a)
			if !ok {
				ps.warn("bad_sources", p+".author", "sources entry author is not a string")
			} else if !validActor(s, true) {
				ps.warn("bad_actor", p+".author", "author does not follow the actor convention")
			}
		}
		if u := mapGet(e, "usage_count"); u != nil {
			if c, ok := yamlInt(u); !ok || c < 0 {
				ps.warn("bad_sources", p+".usage_count", "usage_count is not a non-negative integer")
			}
		}
	}
	return ids
}

func checkGenerated(ps *problems, n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		ps.warn("bad_generated", "generated", "generated is not a mapping")
		return
	}
	checkStamp(ps, n, "generated", "bad_generated", false)
}

func checkVerified(ps *problems, n *yaml.Node) {
	if n == nil {
		return
	}
	nodes, paths := verifiedEntries(n)
	if nodes == nil && n.Kind != yaml.SequenceNode {
		ps.warn("bad_verified", "verified", "verified is not a mapping or a list of mappings")
		return
	}
	for i, e := range nodes {
		if e.Kind != yaml.MappingNode {
			ps.warn("bad_verified", paths[i], "verified entry is not a mapping")
			continue
		}
		checkStamp(ps, e, paths[i], "bad_verified", true)
	}
}

// checkStamp validates a { by, at } mapping at path; at is required when
// needAt is set.
func checkStamp(ps *problems, m *yaml.Node, path, code string, needAt bool) {
	by, ok := text(mapGet(m, "by"))
	switch {
	case !ok || strings.TrimSpace(by) == "":
		ps.warn(code, path+".by", "by is missing or not a non-empty string")
	case !validActor(by, false):
		ps.warn("bad_actor", path+".by", "by does not follow the actor convention")
	}
	atNode := mapGet(m, "at")
	if atNode == nil {
		if needAt {
			ps.warn(code, path+".at", "at is missing")
		}
		return
	}
	if at, ok := text(atNode); !ok || ClassifyTemporal(at) != TemporalInstant {
		ps.warn("bad_temporal", path+".at", "at is not an RFC 3339 datetime with offset")
	}
}

// ValidActor reports whether s follows the §7 actor convention for
// generated.by and verified[].by: "human:<id>", "process:<id>" or
// "<producer>/<version>".
func ValidActor(s string) bool { return validActor(s, false) }

// validActor checks the §7 actor convention: "human:<id>", "process:<id>"
// or "<producer>/<version>"; authors may also be "team:<id>" or
// "agent:<id>". Actors contain no whitespace or control characters.
func validActor(s string, author bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	prefixes := []string{"human:", "process:"}
	if author {
		prefixes = append(prefixes, "team:", "agent:")
	}
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return len(s) > len(p)
		}
	}
	slash := strings.IndexByte(s, '/')
	if slash <= 0 || slash == len(s)-1 {
		return false
	}
	return !strings.ContainsRune(s[:slash], ':')
}

func checkProfile(ps *problems, fields []TemporalField) {
	var dates, instants int
	for _, f := range fields {
		switch f.Kind {
		case TemporalDate:
			dates++
		case TemporalInstant:
			instants++
		default:
			ps.warn("bad_temporal", f.Path, "value is neither a YYYY-MM-DD date nor an RFC 3339 datetime with offset")
		}
	}
	if dates > 0 && instants > 0 {
		ps.warn("mixed_temporal_profile", "", "profile fields mix calendar dates and datetimes")
	}
}

func checkComputation(ps *problems, d *Document, typ string) {
	rt := d.Lookup("runtime")
	rts, rtOK := text(rt)
	if strings.TrimSpace(typ) == TypeAttestedComputation && (!rtOK || strings.TrimSpace(rts) == "") {
		ps.warn("attested_missing_runtime", "runtime", "Attested Computation has no runtime")
	} else if rt != nil && !rtOK {
		ps.warn("bad_runtime", "runtime", "runtime is not a string")
	}
	if n := d.Lookup("parameters"); n != nil {
		checkParameters(ps, n)
	}
	if n := d.Lookup("computation"); n != nil {
		if _, ok := text(n); !ok {
			ps.warn("bad_computation", "computation", "computation is not a string path")
		}
	}
	checkRef(ps, d.Lookup("executor"), "executor", "bad_executor")
	checkRef(ps, d.Lookup("attester"), "attester", "bad_attester")
}

func checkParameters(ps *problems, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		ps.warn("bad_parameters", "parameters", "parameters is not a list of mappings")
		return
	}
	for i, e := range n.Content {
		p := indexPath("parameters", i)
		if e.Kind != yaml.MappingNode {
			ps.warn("bad_parameters", p, "parameters entry is not a mapping")
			continue
		}
		if name, ok := text(mapGet(e, "name")); !ok || strings.TrimSpace(name) == "" {
			ps.warn("bad_parameters", p+".name", "parameters entry has no name")
		}
		if t := mapGet(e, "type"); t != nil {
			if _, ok := text(t); !ok {
				ps.warn("bad_parameters", p+".type", "parameters entry type is not a string")
			}
		}
		if r := mapGet(e, "required"); r != nil {
			if _, ok := yamlBool(r); !ok {
				ps.warn("bad_parameters", p+".required", "parameters entry required is not a boolean")
			}
		}
	}
}

func checkRef(ps *problems, n *yaml.Node, field, code string) {
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		ps.warn(code, field, field+" is not a mapping")
		return
	}
	if r, ok := text(mapGet(n, "resource")); !ok || strings.TrimSpace(r) == "" {
		ps.warn(code, field+".resource", field+" has no resource")
	}
	if rc := mapGet(n, "receipt"); rc != nil && !isTextList(rc) {
		ps.warn(code, field+".receipt", field+" receipt is not a list of strings")
	}
}
