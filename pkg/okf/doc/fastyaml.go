package doc

import (
	"bytes"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// This file implements a fast path for the common, simple subset of YAML
// that OKF frontmatter is written in: block mappings and sequences, plain
// scalars (including multi-line folded ones), single-line quoted scalars and
// single-line flow collections, without comments, tags, anchors or block
// scalars. It builds exactly the yaml.Node tree that go.yaml.in/yaml/v3
// builds for the same input (verified by a differential fuzz test) and
// gives up (ok=false) on anything outside the subset or anything it is not
// sure is valid, in which case the caller falls back to the full YAML
// parser. The fast path is several times faster than the general parser.

const fastMaxDepth = 64

type fastLine struct {
	start, end int // content bytes [start,end) without the newline; start is after the indentation
	indent     int // number of leading spaces
	blank      bool
}

type fastParser struct {
	src   []byte
	str   string // src as a string; scalar values are substrings of it
	lines []fastLine
	i     int // current line
	depth int
	slab  []yaml.Node

	colLine, colOff, colVal int // resume point for column
}

// fastParse parses fm on the fast path. Node lines are frontmatter lines.
func fastParse(fm []byte) (*yaml.Node, bool) {
	if !fastEligible(fm) {
		return nil, false
	}
	p := fastParser{src: fm, str: string(fm), slab: make([]yaml.Node, estimateNodes(fm)), colLine: -1}
	if !p.split() {
		return nil, false
	}
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, false
	}
	root, ok := p.blockMapping(p.lines[p.i].indent)
	if !ok {
		return nil, false
	}
	p.skipBlank()
	if p.i < len(p.lines) {
		return nil, false
	}
	return root, true
}

// fastSpecial marks bytes that fastEligible must look at.
var fastSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = c != '\n'
	}
	for _, c := range []byte{0x7f, '#', '\\', 0xC2, 0xE2, 0xEF} {
		t[c] = true
	}
	return t
}()

// fastEligible rejects bytes whose YAML meaning the fast path does not model:
// tabs, carriage returns, comments, escapes and other control or special
// characters.
func fastEligible(b []byte) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !fastSpecial[c] {
			continue
		}
		switch {
		case c == 0xC2:
			if i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9F {
				return false // C1 controls including NEL
			}
		case c == 0xE2:
			if i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
				return false // line and paragraph separators
			}
		case c == 0xEF:
			if i+2 < len(b) && ((b[i+1] == 0xBB && b[i+2] == 0xBF) || (b[i+1] == 0xBF && b[i+2] >= 0xBE)) {
				return false // BOM, U+FFFE, U+FFFF
			}
		default:
			return false
		}
	}
	return true
}

// estimateNodes returns a close upper estimate of the node count for the
// fast path, so that nodes come from a single allocation.
func estimateNodes(fm []byte) int {
	n := 2*bytes.Count(fm, []byte(": ")) + bytes.Count(fm, []byte{','}) + bytes.Count(fm, []byte("- ")) + 4
	return min(n, 1024)
}

func (p *fastParser) split() bool {
	n := bytes.Count(p.src, []byte{'\n'}) + 1
	p.lines = make([]fastLine, 0, n)
	for off := 0; off < len(p.src); {
		end := bytes.IndexByte(p.src[off:], '\n')
		next := len(p.src)
		if end < 0 {
			end = len(p.src)
		} else {
			end += off
			next = end + 1
		}
		ind := 0
		for off+ind < end && p.src[off+ind] == ' ' {
			ind++
		}
		l := fastLine{start: off + ind, end: end, indent: ind, blank: off+ind == end}
		if !l.blank && ind == 0 && end-off >= 3 {
			if s := p.src[off : off+3]; string(s) == "---" || string(s) == "..." {
				return false // document markers
			}
		}
		p.lines = append(p.lines, l)
		off = next
	}
	return true
}

func (p *fastParser) skipBlank() {
	for p.i < len(p.lines) && p.lines[p.i].blank {
		p.i++
	}
}

// nextNonBlank returns the index of the next non-blank line at or after i.
func (p *fastParser) nextNonBlank(i int) int {
	for i < len(p.lines) && p.lines[i].blank {
		i++
	}
	return i
}

func (p *fastParser) content(i int) []byte { return p.src[p.lines[i].start:p.lines[i].end] }

func (p *fastParser) node() *yaml.Node {
	if len(p.slab) == 0 {
		p.slab = make([]yaml.Node, 16)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	return n
}

// column returns the 1-based character column of byte offset off. Offsets
// on a line are mostly visited in increasing order, so the rune count is
// resumed from the previous call to stay linear on long lines.
func (p *fastParser) column(line, off int) int {
	ls := p.lines[line].start - p.lines[line].indent
	if p.colLine != line || p.colOff > off || p.colOff < ls {
		p.colLine, p.colOff, p.colVal = line, ls, 1
	}
	p.colVal += utf8.RuneCount(p.src[p.colOff:off])
	p.colOff = off
	return p.colVal
}

func (p *fastParser) enter() bool {
	p.depth++
	return p.depth <= fastMaxDepth
}

func (p *fastParser) blockMapping(n int) (*yaml.Node, bool) {
	if !p.enter() {
		return nil, false
	}
	defer func() { p.depth-- }()
	m := p.node()
	m.Kind, m.Tag, m.Line, m.Column = yaml.MappingNode, "!!map", p.i+1, n+1
	for {
		p.skipBlank()
		if p.i >= len(p.lines) || p.lines[p.i].indent < n {
			break
		}
		if p.lines[p.i].indent > n {
			return nil, false
		}
		li := p.i
		c := p.content(li)
		key, rest, ok := mapKey(c)
		if !ok {
			return nil, false
		}
		ks := p.lines[li].start
		m.Content = append(m.Content, p.scalar(p.str[ks:ks+len(key)], 0, li, n+1))
		p.i++
		val, ok := p.value(n, li, p.lines[li].start+rest, true)
		if !ok {
			return nil, false
		}
		m.Content = append(m.Content, val)
	}
	if len(m.Content) == 0 {
		return nil, false
	}
	return m, true
}

func (p *fastParser) blockSequence(n int) (*yaml.Node, bool) {
	if !p.enter() {
		return nil, false
	}
	defer func() { p.depth-- }()
	s := p.node()
	s.Kind, s.Tag, s.Line, s.Column = yaml.SequenceNode, "!!seq", p.i+1, n+1
	for {
		p.skipBlank()
		if p.i >= len(p.lines) || p.lines[p.i].indent < n {
			break
		}
		if p.lines[p.i].indent > n {
			return nil, false
		}
		li := p.i
		if !isSeqEntry(p.content(li)) {
			break
		}
		after := p.lines[li].start + 1
		sp := after
		for sp < p.lines[li].end && p.src[sp] == ' ' {
			sp++
		}
		var item *yaml.Node
		var ok bool
		if sp < p.lines[li].end {
			c := p.src[sp:p.lines[li].end]
			if _, _, isMap := mapKey(c); isMap || isSeqEntry(c) {
				// Compact nested collection: re-read this line as if the
				// "- " were indentation.
				p.lines[li].indent += sp - p.lines[li].start
				p.lines[li].start = sp
				if isMap {
					item, ok = p.blockMapping(p.lines[li].indent)
				} else {
					item, ok = p.blockSequence(p.lines[li].indent)
				}
				if !ok {
					return nil, false
				}
				s.Content = append(s.Content, item)
				continue
			}
		}
		p.i++
		item, ok = p.value(n, li, after, false)
		if !ok {
			return nil, false
		}
		s.Content = append(s.Content, item)
	}
	return s, true
}

// value parses the value following a "key:" or "-" indicator that ends at
// byte offset after on line li, in a block at indentation n.
func (p *fastParser) value(n, li, after int, inMapping bool) (*yaml.Node, bool) {
	end := p.lines[li].end
	pos := after
	for pos < end && p.src[pos] == ' ' {
		pos++
	}
	if pos < end {
		if pos == after {
			return nil, false
		}
		return p.inline(n, li, pos)
	}
	// Nothing on this line: a nested block, a scalar on the next line, or null.
	j := p.nextNonBlank(p.i)
	if j < len(p.lines) {
		c := p.content(j)
		switch ind := p.lines[j].indent; {
		case ind > n:
			p.i = j
			if isSeqEntry(c) {
				return p.blockSequence(ind)
			}
			if _, _, ok := mapKey(c); ok {
				return p.blockMapping(ind)
			}
			return p.inline(n, j, p.lines[j].start)
		case ind == n && inMapping && isSeqEntry(c):
			p.i = j
			return p.blockSequence(n)
		}
	}
	return p.scalar("", 0, li, p.column(li, after)), true
}

// inline parses a scalar or flow collection starting at pos on line li.
func (p *fastParser) inline(n, li, pos int) (*yaml.Node, bool) {
	end := p.lines[li].end
	c := p.src[pos]
	switch c {
	case '[', '{', '"', '\'':
		node, q, ok := p.flow(li, pos, 0)
		if !ok {
			return nil, false
		}
		for q < end && p.src[q] == ' ' {
			q++
		}
		if q != end {
			return nil, false
		}
		return node, true
	}
	if isIndicator(c) && !(c == '-' && pos+1 < end && p.src[pos+1] != ' ') {
		return nil, false
	}
	return p.plainBlock(n, li, pos)
}

// plainBlock parses a possibly multi-line plain scalar in block context;
// continuation lines must be indented more than n.
func (p *fastParser) plainBlock(n, li, pos int) (*yaml.Node, bool) {
	first := trimRightSpace(p.src[pos:p.lines[li].end])
	if !plainLineOK(first) {
		return nil, false
	}
	col := p.column(li, pos)
	j := p.nextNonBlank(li + 1)
	if j >= len(p.lines) || p.lines[j].indent <= n {
		return p.scalar(p.str[pos:pos+len(first)], 0, li, col), true
	}
	buf := append([]byte(nil), first...)
	last := li
	for j < len(p.lines) && p.lines[j].indent > n {
		line := trimRightSpace(p.content(j))
		if !plainLineOK(line) {
			return nil, false
		}
		if blanks := j - last - 1; blanks == 0 {
			buf = append(buf, ' ')
		} else {
			for k := 0; k < blanks; k++ {
				buf = append(buf, '\n')
			}
		}
		buf = append(buf, line...)
		last = j
		j = p.nextNonBlank(j + 1)
	}
	p.i = last + 1
	return p.scalar(string(buf), 0, li, col), true
}
