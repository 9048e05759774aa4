// Package edit makes lossless byte patches to OKF documents. Every edit
// replaces one exactly located span of the original bytes; everything else
// (other keys, comments, quoting, blank lines, the body) stays byte for
// byte. Anything the editor cannot locate unambiguously fails closed with
// an *Error instead of guessing.
package edit

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/notebridge/notebridge/pkg/okf/doc"
)

// Error is a refusal to edit, with a stable code.
type Error struct {
	Code string // e.g. "ambiguous_yaml", "crlf_frontmatter", "not_block_sequence"
	Msg  string
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

func refuse(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// keyPattern is the shape of keys the editor writes (the spec's keys).
var keyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

type span struct {
	start, end int // byte offsets in the source
	text       string
}

// Editor collects edits against one document's original bytes.
type Editor struct {
	src   []byte
	d     *doc.Document
	lines []int // byte offset of the start of each 1-based line (index 0 unused)
	fmEnd int   // offset of the closing fence line (insertion point for new keys)
	edits []span
}

// New prepares an editor for d, which must have been parsed whole. A
// frontmatter with CR line endings or tabs in indentation is refused: its
// spans cannot be rebuilt unambiguously.
func New(d *doc.Document) (*Editor, error) {
	if d.BodyOmitted() {
		return nil, refuse("body_omitted", "the document was not read whole")
	}
	src := d.Bytes()
	e := &Editor{src: src, d: d, lines: []int{0, 0}}
	for i, c := range src {
		if c == '\n' {
			e.lines = append(e.lines, i+1)
		}
	}
	if d.HasFrontmatter() {
		fm := d.Frontmatter()
		if bytes.IndexByte(fm, '\r') >= 0 {
			return nil, refuse("crlf_frontmatter", "frontmatter with CR line endings is not edited")
		}
		e.fmEnd = bytes.Index(src, fm) + len(fm)
	}
	return e, nil
}

// lineStart returns the offset of 1-based line n (len(src) past the end).
func (e *Editor) lineStart(n int) int {
	if n < len(e.lines) {
		return e.lines[n]
	}
	return len(e.src)
}

// offset converts a node position to a byte offset.
func (e *Editor) offset(line, col int) int {
	return e.lineStart(line) + col - 1
}

func (e *Editor) add(start, end int, text string) {
	e.edits = append(e.edits, span{start, end, text})
}

// Bytes applies the edits and returns the new document. Overlapping edits
// are a programming error reported as a refusal.
func (e *Editor) Bytes() ([]byte, error) {
	edits := append([]span(nil), e.edits...)
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	pos := 0
	for _, s := range edits {
		if s.start < pos {
			return nil, refuse("overlapping_edits", "two operations edit the same bytes")
		}
		out.Write(e.src[pos:s.start])
		out.WriteString(s.text)
		pos = s.end
	}
	out.Write(e.src[pos:])
	return out.Bytes(), nil
}

// Changed reports whether any edit was made.
func (e *Editor) Changed() bool { return len(e.edits) > 0 }

// entry locates the whole top-level entry of key: from the start of its key
// line to the end of its last value line. Trailing blank and comment lines
// at column 0 belong to what follows. ok is false when the key is absent.
func (e *Editor) entry(key string) (start, end int, k, v *yaml.Node, ok bool, err error) {
	root := e.d.Root()
	if root == nil {
		return 0, 0, nil, nil, false, nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != key {
			continue
		}
		k, v = root.Content[i], root.Content[i+1]
		if k.Column != 1 {
			return 0, 0, nil, nil, false, refuse("ambiguous_yaml", "key %q is not at column 1", key)
		}
		if v.Anchor != "" || (v.Tag != "" && v.Style&yaml.TaggedStyle != 0) {
			return 0, 0, nil, nil, false, refuse("ambiguous_yaml", "key %q carries an anchor or tag", key)
		}
		start = e.lineStart(k.Line)
		last := k.Line
		for ln := k.Line + 1; e.lineStart(ln) < e.fmEnd; ln++ {
			text := e.src[e.lineStart(ln):min(e.lineStart(ln+1), e.fmEnd)]
			trimmed := strings.TrimSpace(string(text))
			switch {
			case trimmed == "":
				continue
			case text[0] == ' ' || text[0] == '\t':
				last = ln
				continue
			case text[0] == '-' && v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && v.Column == 1:
				last = ln // "key:\n- item" sequences at the key's indentation
				continue
			}
			break
		}
		end = e.lineStart(last + 1)
		if end > e.fmEnd {
			end = e.fmEnd
		}
		// Up to the next key (or the closing fence) only blank and comment
		// lines may follow: a value that goes on at column 1 (a flow
		// collection continued there, list items after a column-1
		// comment) has bytes past end that an edit would leave behind.
		next := e.fmEnd
		if i+2 < len(root.Content) {
			next = min(next, e.lineStart(root.Content[i+2].Line))
		}
		for ln := last + 1; e.lineStart(ln) < next; ln++ {
			text := strings.TrimSpace(string(e.src[e.lineStart(ln):min(e.lineStart(ln+1), next)]))
			if text != "" && !strings.HasPrefix(text, "#") {
				return 0, 0, nil, nil, false, refuse("ambiguous_yaml", "the value of key %q continues at column 1", key)
			}
		}
		return start, end, k, v, true, nil
	}
	return 0, 0, nil, nil, false, nil
}

// SetKey sets top-level key to a rendered value. value is either one line
// ("{ by: x, at: y }", a scalar) or a block starting with "\n" whose lines
// are already indented. An existing entry is replaced as a whole; a new
// key goes at the end of the frontmatter (creating a frontmatter block when
// the document has none).
func (e *Editor) SetKey(key, value string) error {
	if !keyPattern.MatchString(key) {
		return refuse("bad_key", "keys written by the editor are identifiers")
	}
	line := key + ":"
	if strings.HasPrefix(value, "\n") {
		line += value
	} else {
		line += " " + value + "\n"
	}
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	start, end, _, _, ok, err := e.entry(key)
	if err != nil {
		return err
	}
	switch {
	case ok:
		e.add(start, end, line)
	case e.d.HasFrontmatter():
		pos := e.fmEnd
		if pos > 0 && e.src[pos-1] != '\n' {
			line = "\n" + line
		}
		e.add(pos, pos, line)
	default:
		e.add(0, 0, "---\n"+line+"---\n")
	}
	return nil
}

// DeleteKey removes a top-level entry; a missing key is not an error.
func (e *Editor) DeleteKey(key string) error {
	start, end, _, _, ok, err := e.entry(key)
	if err != nil || !ok {
		return err
	}
	e.add(start, end, "")
	return nil
}

// ReplaceScalar replaces one single-line scalar node's bytes (quotes
// included) with rendered text, after checking that the located bytes
// really are that scalar.
func (e *Editor) ReplaceScalar(n *yaml.Node, rendered string) error {
	if n == nil || n.Kind != yaml.ScalarNode || n.Anchor != "" || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle|yaml.TaggedStyle) != 0 {
		return refuse("ambiguous_yaml", "the value is not a plain or quoted scalar")
	}
	start := e.offset(n.Line, n.Column)
	raw := n.Value
	switch {
	case n.Style&yaml.SingleQuotedStyle != 0:
		raw = "'" + strings.ReplaceAll(n.Value, "'", "''") + "'"
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if strings.ContainsAny(n.Value, "\\\"\n\t") {
			return refuse("ambiguous_yaml", "an escaped double-quoted value is not edited in place")
		}
		raw = `"` + n.Value + `"`
	}
	end := start + len(raw)
	if start < 0 || end > len(e.src) || string(e.src[start:end]) != raw || strings.Contains(raw, "\n") {
		return refuse("ambiguous_yaml", "the value's bytes could not be located exactly")
	}
	e.add(start, end, rendered)
	return nil
}

// ReplaceKey replaces the whole top-level entry of oldKey with newKey set
// to value, in the same place (used to turn a legacy key into its
// successor). A missing oldKey is refused.
func (e *Editor) ReplaceKey(oldKey, newKey, value string) error {
	start, end, _, _, ok, err := e.entry(oldKey)
	if err != nil {
		return err
	}
	if !ok {
		return refuse("missing_key", "key %q is not present", oldKey)
	}
	if !keyPattern.MatchString(newKey) {
		return refuse("bad_key", "keys written by the editor are identifiers")
	}
	e.add(start, end, newKey+": "+value+"\n")
	return nil
}

// ReplaceBody replaces body bytes [start, end) (offsets within Body()).
func (e *Editor) ReplaceBody(start, end int, text string) error {
	body := e.d.Body()
	off := len(e.src) - len(body)
	if start < 0 || end > len(body) || start > end {
		return refuse("internal", "body span out of range")
	}
	e.add(off+start, off+end, text)
	return nil
}
