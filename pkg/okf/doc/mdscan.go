package doc

import "bytes"

// This file holds the small Markdown scanning primitives shared by links.go
// and citations.go. They are deliberately simple, linear-time approximations
// of CommonMark that are good enough for link, footnote and heading
// extraction from OKF bodies.

// fenceState tracks fenced code blocks (``` and ~~~) line by line. Fences
// are recognised at any indentation so that fences nested in list items are
// honoured.
type fenceState struct {
	ch   byte // fence character of the open block, 0 when outside
	size int  // length of the opening fence run
}

// step consumes one line (without terminator) and reports whether it
// belongs to a fenced code block, fence lines included.
func (f *fenceState) step(line []byte) bool {
	t := trimLeftBlank(line)
	if f.ch != 0 {
		n := runLen(t, f.ch)
		if n >= f.size && isBlank(t[n:]) {
			f.ch, f.size = 0, 0
		}
		return true
	}
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return false
	}
	n := runLen(t, t[0])
	if n < 3 {
		return false
	}
	if t[0] == '`' && bytes.IndexByte(t[n:], '`') >= 0 {
		return false // backtick fences cannot have backticks in the info string
	}
	f.ch, f.size = t[0], n
	return true
}

func runLen(b []byte, c byte) int {
	n := 0
	for n < len(b) && b[n] == c {
		n++
	}
	return n
}

func trimLeftBlank(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return b[i:]
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// forEachLine calls fn for each line of b with the line content (without
// "\n" or "\r\n"), its start offset and its 1-based line number.
func forEachLine(b []byte, fn func(line []byte, off, lineNo int)) {
	lineNo := 1
	for off := 0; off < len(b); lineNo++ {
		end := bytes.IndexByte(b[off:], '\n')
		next := len(b)
		if end < 0 {
			end = len(b)
		} else {
			end += off
			next = end + 1
		}
		line := b[off:end]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		fn(line, off, lineNo)
		off = next
	}
}

// segment is a run of consecutive non-blank lines outside fenced code: a
// rough paragraph, inside which inline constructs may span lines.
type segment struct {
	start, end int // byte range in the body
	line       int // 1-based line of start
}

// segments splits body into paragraphs outside fenced code blocks.
func segments(body []byte) []segment {
	var out []segment
	var fs fenceState
	cur := segment{start: -1}
	flush := func() {
		if cur.start >= 0 {
			out = append(out, cur)
			cur.start = -1
		}
	}
	forEachLine(body, func(line []byte, off, lineNo int) {
		if fs.step(line) || isBlank(line) {
			flush()
			return
		}
		if cur.start < 0 {
			cur = segment{start: off, line: lineNo}
		}
		cur.end = off + len(line)
	})
	flush()
	return out
}

// span is a half-open byte range.
type span struct{ start, end int }

// codeSpans returns the inline code spans of seg in order. A backtick run
// opens a span closed by the next run of exactly the same length; runs
// without a partner are literal. The pairing is linear in the number of
// runs.
func codeSpans(seg []byte) []span {
	if bytes.IndexByte(seg, '`') < 0 {
		return nil
	}
	type run struct{ pos, n int }
	var runs []run
	for i := 0; i < len(seg); {
		if seg[i] != '`' {
			i++
			continue
		}
		n := runLen(seg[i:], '`')
		runs = append(runs, run{i, n})
		i += n
	}
	byLen := map[int][]int{}
	for k, r := range runs {
		byLen[r.n] = append(byLen[r.n], k)
	}
	cursor := map[int]int{}
	var out []span
	for k := 0; k < len(runs); k++ {
		n := runs[k].n
		lst, c := byLen[n], cursor[n]
		for c < len(lst) && lst[c] <= k {
			c++
		}
		cursor[n] = c
		if c == len(lst) {
			continue // unmatched: literal backticks
		}
		j := lst[c]
		out = append(out, span{runs[k].pos, runs[j].pos + runs[j].n})
		k = j
	}
	return out
}

// spanCursor answers "does a code span start at i" for non-decreasing i.
type spanCursor struct {
	spans []span
	k     int
}

// skip returns the end of the code span starting at i, or i itself.
func (c *spanCursor) skip(i int) int {
	for c.k < len(c.spans) && c.spans[c.k].start < i {
		c.k++
	}
	if c.k < len(c.spans) && c.spans[c.k].start == i {
		return c.spans[c.k].end
	}
	return i
}

func isASCIIPunct(c byte) bool {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')
}
