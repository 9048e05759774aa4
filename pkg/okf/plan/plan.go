// Package plan binds a proposed OKF change to the bundle state it was made
// against: the files read and written with their digests, the base and
// result revisions, and a domain-separated plan digest over all of it. A
// preview publishes a plan; an apply rebuilds it from the live bundle and
// must arrive at the same digest.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sort"

	"github.com/notebridge/notebridge/pkg/okf/store"
)

// File is one file a plan changes.
type File struct {
	Path   string
	Before []byte // nil when the file does not exist
	After  []byte // nil deletes the file
}

// Ref is a path with the digest of its content ("" when absent).
type Ref struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Plan is a change bound to a base revision.
type Plan struct {
	Kind           string
	RequestDigest  string
	BaseRevision   string
	ResultRevision string
	Reads          []Ref
	Writes         []Ref
	Deletes        []string
	Files          []File
	Digest         string
}

// New builds a plan over base. reads are the files the plan's content
// depends on (their current digests are taken from base); files with
// identical before and after are dropped. The root index.md, when
// written, sorts last.
func New(kind, requestDigest string, base store.Manifest, reads []string, files []File) *Plan {
	p := &Plan{Kind: kind, RequestDigest: requestDigest, BaseRevision: base.Revision}
	seen := map[string]bool{}
	for _, r := range reads {
		if !seen[r] {
			seen[r] = true
			p.Reads = append(p.Reads, Ref{Path: r, SHA256: base.Lookup(r)})
		}
	}
	var changes []store.FileChange
	for _, f := range files {
		if f.After != nil && f.Before != nil && string(f.After) == string(f.Before) {
			continue
		}
		if f.After == nil && f.Before == nil {
			continue
		}
		p.Files = append(p.Files, f)
		changes = append(changes, store.FileChange{Path: f.Path, Content: f.After})
		if f.After == nil {
			p.Deletes = append(p.Deletes, f.Path)
		} else {
			p.Writes = append(p.Writes, Ref{Path: f.Path, SHA256: store.SHA256Hex(f.After)})
		}
	}
	sort.Slice(p.Reads, func(i, j int) bool { return p.Reads[i].Path < p.Reads[j].Path })
	sort.Slice(p.Writes, func(i, j int) bool { return p.Writes[i].Path < p.Writes[j].Path })
	sort.Strings(p.Deletes)
	sort.SliceStable(p.Files, func(i, j int) bool {
		if (p.Files[i].Path == "index.md") != (p.Files[j].Path == "index.md") {
			return p.Files[j].Path == "index.md"
		}
		return p.Files[i].Path < p.Files[j].Path
	})
	p.ResultRevision = base.Revision
	if len(changes) > 0 {
		p.ResultRevision = store.ResultRevision(base, changes)
	}
	p.Digest = p.digest()
	return p
}

// Noop reports whether the plan changes nothing.
func (p *Plan) Noop() bool { return len(p.Files) == 0 }

// digest is SHA-256 over a domain tag and a canonical JSON encoding of the
// request digest, revisions, reads, writes, deletes and (empty) renames.
func (p *Plan) digest() string {
	h := sha256.New()
	io.WriteString(h, "notebridge/okf/plan-digest/v1\x00")
	enc := json.NewEncoder(h)
	enc.Encode(struct {
		Kind           string   `json:"kind"`
		RequestDigest  string   `json:"request_digest"`
		BaseRevision   string   `json:"base_revision"`
		ResultRevision string   `json:"result_revision"`
		Reads          []Ref    `json:"reads"`
		Writes         []Ref    `json:"writes"`
		Deletes        []string `json:"deletes"`
		Renames        []string `json:"renames"`
	}{p.Kind, p.RequestDigest, p.BaseRevision, p.ResultRevision, nonNil(p.Reads), nonNil(p.Writes), nonNilS(p.Deletes), []string{}})
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func nonNil(r []Ref) []Ref {
	if r == nil {
		return []Ref{}
	}
	return r
}

func nonNilS(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// RequestDigest is the domain-separated digest of a canonical request
// value (its JSON encoding, with Go's sorted map keys).
func RequestDigest(kind string, request any) string {
	h := sha256.New()
	io.WriteString(h, "notebridge/okf/request/v1\x00"+kind+"\x00")
	json.NewEncoder(h).Encode(request)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// IdempotencyKey derives a commit key from a plan digest; callers never
// choose it.
func IdempotencyKey(kind, planDigest string) string {
	return store.SHA256Hex([]byte("notebridge/okf/idempotency/v1\x00" + kind + "\x00" + planDigest))
}

// Changes converts the plan's files into store changes that expect each
// file to still hold its before-content at commit.
func (p *Plan) Changes() []store.FileChange {
	out := make([]store.FileChange, 0, len(p.Files))
	for _, f := range p.Files {
		want := ""
		if f.Before != nil {
			want = store.SHA256Hex(f.Before)
		}
		out = append(out, store.FileChange{Path: f.Path, Content: f.After, ExpectSHA: want, ExpectSet: true})
	}
	return out
}
