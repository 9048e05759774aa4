// Package doc parses, projects and checks single Open Knowledge Format
// (OKF v0.2) documents: Markdown files with an optional YAML frontmatter
// block.
//
// Parsing is lossless: a parsed Document re-serializes to exactly its input
// bytes. The frontmatter is decoded once into a yaml.Node tree; typed views
// (Project, ProfileFields, Check) read raw scalar text from that tree so
// YAML never turns dates or numbers into other values behind the caller's
// back. All parsing of untrusted input is bounded by Limits.
//
// Frontmatter written in the simple YAML subset OKF producers emit is
// decoded by a built-in fast path (fastyaml.go) that yields exactly the node
// tree go.yaml.in/yaml/v3 yields; anything else goes through that library.
package doc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits bounds parsing of untrusted documents. A zero (or negative) field
// means the corresponding DefaultLimits value.
type Limits struct {
	MaxFrontmatterBytes int // maximum size of the YAML text between the fences
	MaxDepth            int // maximum YAML nesting depth (the root mapping is depth 1)
	MaxNodes            int // maximum number of YAML nodes (keys and values)
}

// DefaultLimits are the limits used for zero Limits fields.
var DefaultLimits = Limits{MaxFrontmatterBytes: 64 << 10, MaxDepth: 32, MaxNodes: 10000}

func (l Limits) normalized() Limits {
	if l.MaxFrontmatterBytes <= 0 {
		l.MaxFrontmatterBytes = DefaultLimits.MaxFrontmatterBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultLimits.MaxNodes
	}
	return l
}

// Stable ParseError codes.
const (
	CodeNotUTF8                 = "not_utf8"
	CodeNoFrontmatter           = "no_frontmatter" // reserved for callers that require frontmatter; Parse does not return it
	CodeUnterminatedFrontmatter = "unterminated_frontmatter"
	CodeFrontmatterTooLarge     = "frontmatter_too_large"
	CodeYAMLSyntax              = "yaml_syntax"
	CodeFrontmatterNotMapping   = "frontmatter_not_mapping"
	CodeTooDeep                 = "too_deep"
	CodeTooManyNodes            = "too_many_nodes"
	CodeDuplicateKey            = "duplicate_key"
	CodeAliasNotAllowed         = "alias_not_allowed"
	CodeMergeKeyNotAllowed      = "merge_key_not_allowed"
)

// ParseError is a stable, value-free parse failure. Msg never contains
// document content, so it is safe to log and to show to other tenants.
type ParseError struct {
	Code string // stable snake_case code, one of the Code* constants
	Line int    // 1-based line in the file where known, else 0
	Msg  string // short fixed English text
}

// Error implements error.
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("okf: %s at line %d: %s", e.Code, e.Line, e.Msg)
	}
	return fmt.Sprintf("okf: %s: %s", e.Code, e.Msg)
}

func perr(code string, line int, msg string) *ParseError {
	return &ParseError{Code: code, Line: line, Msg: msg}
}

// Document is one parsed Markdown file with optional YAML frontmatter.
// A Document is immutable and safe for concurrent reads.
type Document struct {
	src         []byte // private copy of the input (header only when bodyOmitted)
	hasFM       bool
	fmStart     int // offset of the first frontmatter byte
	fmEnd       int // offset of the closing fence line
	bodyStart   int // offset of the first body byte
	bodyOmitted bool
	root        *yaml.Node // root mapping; nil without frontmatter
}

// Parse splits src into frontmatter and body and decodes the frontmatter.
//
// A file whose first line (after an optional UTF-8 BOM) is not exactly "---"
// has no frontmatter; that is not an error. The closing fence is a line that
// is exactly "---" or "...", optionally followed by spaces or tabs. The
// frontmatter must be a single YAML document whose root is a mapping, without
// aliases, merge keys or duplicate keys, and within lim. Failures are
// returned as *ParseError. Parse copies src; the caller may reuse it.
func Parse(src []byte, lim Limits) (*Document, error) {
	lim = lim.normalized()
	if !utf8.Valid(src) {
		return nil, perr(CodeNotUTF8, invalidUTF8Line(src), "document is not valid UTF-8")
	}
	window, atEOF := src, true
	limit := headerLimit(lim)
	if len(window) > limit {
		window, atEOF = window[:limit], false
	}
	h, err, more := scanHeader(window, atEOF, lim.MaxFrontmatterBytes)
	if more {
		return nil, perr(CodeFrontmatterTooLarge, 1, "frontmatter exceeds the size limit")
	}
	if err != nil {
		return nil, err
	}
	d := &Document{src: bytes.Clone(src)}
	if err := d.init(h, lim); err != nil {
		return nil, err
	}
	return d, nil
}

// ParseFrontmatterOnly is Parse for callers that only need the frontmatter.
// It reads at most MaxFrontmatterBytes plus a small margin from r and stops
// once the closing fence has been read, so bodies of large files are never
// read in full. The returned Document has an empty Body and BodyOmitted
// true; its Bytes are the bytes through the closing fence line. UTF-8
// validity is checked for those bytes only.
func ParseFrontmatterOnly(r io.Reader, lim Limits) (*Document, error) {
	lim = lim.normalized()
	limit := headerLimit(lim)
	bp := readBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 {
			readBufs.Put(bp)
		}
	}()
	buf := (*bp)[:0]
	eof, empty := false, 0
	for {
		window, atEOF := buf, eof
		if len(window) > limit {
			window, atEOF = window[:limit], false
		}
		h, perr0, more := scanHeader(window, atEOF, lim.MaxFrontmatterBytes)
		if !more {
			if perr0 != nil {
				return nil, perr0
			}
			return finishHeaderOnly(buf, h, lim)
		}
		if len(buf) > limit {
			return nil, perr(CodeFrontmatterTooLarge, 1, "frontmatter exceeds the size limit")
		}
		readEnd := min(cap(buf), limit+1) // never read past the header limit
		if len(buf) == readEnd {
			nb := make([]byte, len(buf), min(2*cap(buf), limit+1))
			copy(nb, buf)
			buf, readEnd = nb, cap(nb)
			*bp = nb
		}
		n, rerr := r.Read(buf[len(buf):readEnd])
		buf = buf[:len(buf)+n]
		if n == 0 && rerr == nil {
			if empty++; empty >= 100 {
				return nil, fmt.Errorf("okf: read frontmatter: %w", io.ErrNoProgress)
			}
		} else {
			empty = 0
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return nil, fmt.Errorf("okf: read frontmatter: %w", rerr)
			}
			eof = true
		}
	}
}

// readBufs recycles ParseFrontmatterOnly read buffers; the document keeps
// only a copy of the header bytes.
var readBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 4096)
	return &b
}}

func finishHeaderOnly(buf []byte, h header, lim Limits) (*Document, error) {
	end := h.bodyStart
	if !h.hasFM {
		end = 0
	}
	head := buf[:end]
	if !utf8.Valid(head) {
		return nil, perr(CodeNotUTF8, invalidUTF8Line(head), "document is not valid UTF-8")
	}
	d := &Document{src: bytes.Clone(head), bodyOmitted: true}
	h.bodyStart = end
	if err := d.init(h, lim); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Document) init(h header, lim Limits) error {
	d.hasFM = h.hasFM
	d.fmStart, d.fmEnd, d.bodyStart = h.fmStart, h.fmEnd, h.bodyStart
	if !h.hasFM {
		return nil
	}
	root, err := decodeFrontmatter(d.src[d.fmStart:d.fmEnd], lim)
	if err != nil {
		return err
	}
	d.root = root
	return nil
}

// invalidUTF8Line returns the 1-based line of the first invalid UTF-8 byte.
func invalidUTF8Line(b []byte) int {
	line := 1
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == '\n' {
				line++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return line
		}
		i += size
	}
	return line
}

// HasFrontmatter reports whether the document starts with a frontmatter block.
func (d *Document) HasFrontmatter() bool { return d.hasFM }

// Frontmatter returns the raw YAML text between the fences, byte-exact
// (nil without frontmatter). The caller must not modify it.
func (d *Document) Frontmatter() []byte {
	if !d.hasFM {
		return nil
	}
	return d.src[d.fmStart:d.fmEnd:d.fmEnd]
}

// Body returns everything after the closing fence line, byte-exact (the
// whole file without frontmatter). The caller must not modify it.
func (d *Document) Body() []byte {
	if d.bodyOmitted {
		return nil
	}
	return d.src[d.bodyStart:len(d.src):len(d.src)]
}

// BodyOmitted reports whether the body was not read (ParseFrontmatterOnly).
func (d *Document) BodyOmitted() bool { return d.bodyOmitted }

// BodyStartLine returns the 1-based file line on which the body starts, for
// translating body-relative line numbers (as in Link.Line) to file lines.
func (d *Document) BodyStartLine() int {
	return 1 + bytes.Count(d.src[:d.bodyStart], []byte{'\n'})
}

// Bytes re-serializes the document. Documents are never edited in place, so
// this is always exactly the input bytes (for ParseFrontmatterOnly, the bytes
// through the closing fence line). The result is a fresh copy.
func (d *Document) Bytes() []byte { return bytes.Clone(d.src) }

// Root returns the parsed YAML root mapping node (nil without frontmatter).
// Node lines are file lines. Callers must not modify it.
func (d *Document) Root() *yaml.Node { return d.root }

// Lookup returns the value node for a top-level key, or nil.
func (d *Document) Lookup(key string) *yaml.Node {
	if d.root == nil {
		return nil
	}
	return mapGet(d.root, key)
}

// Keys returns the top-level keys in document order.
func (d *Document) Keys() []string {
	if d.root == nil {
		return nil
	}
	keys := make([]string, 0, len(d.root.Content)/2)
	for i := 0; i+1 < len(d.root.Content); i += 2 {
		keys = append(keys, d.root.Content[i].Value)
	}
	return keys
}

// mapGet returns the value for key in mapping node m, or nil.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.ScalarNode && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
