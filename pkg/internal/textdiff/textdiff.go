// Package textdiff renders bounded unified diffs of line lists: the OKF
// previews and the Joplin note-change previews show their changes with it.
package textdiff

import (
	"fmt"
	"strings"
)

// Lines splits s after each "\n"; the last line may lack one.
func Lines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// ctxLines is the number of unchanged lines shown around a change.
const ctxLines = 3

// maxLCSCells bounds the work of aligning the changed middle of two texts;
// a larger middle is shown as removed, then added.
const maxLCSCells = 1_000_000

type lineOp struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // 0-based positions in a and b before this line
}

// Unified renders a unified diff (3 lines of context) of the lines a to
// the lines b (each with its "\n", the last one possibly without), headed
// "--- from" and "+++ to", at most maxBytes long. Lines that did not fit
// are counted in cut, never shown partly. Equal lines give only the header.
func Unified(from, to string, a, b []string, maxBytes int) (diff string, cut int) {
	ops := align(a, b)
	var out strings.Builder
	header := fmt.Sprintf("--- %s\n+++ %s\n", from, to)
	if len(header) > maxBytes {
		return "", countChanged(ops)
	}
	out.WriteString(header)
	full := false
	for _, h := range hunks(ops) {
		start, end := h[0], h[1]
		if full {
			cut += countChanged(ops[start:end])
			continue
		}
		aStart, bStart, aLen, bLen := ops[start].ai+1, ops[start].bi+1, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		if aLen == 0 {
			aStart--
		}
		if bLen == 0 {
			bStart--
		}
		hdr := fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)
		if out.Len()+len(hdr) > maxBytes {
			full = true
			cut += countChanged(ops[start:end])
			continue
		}
		out.WriteString(hdr)
		for i, op := range ops[start:end] {
			line := string(op.kind) + op.text
			if !strings.HasSuffix(op.text, "\n") {
				line += "\n\\ No newline at end of file\n"
			}
			if out.Len()+len(line) > maxBytes {
				full = true
				cut += countChanged(ops[start+i : end])
				break
			}
			out.WriteString(line)
		}
	}
	return out.String(), cut
}

// countChanged counts the added and removed lines of ops.
func countChanged(ops []lineOp) int {
	n := 0
	for _, op := range ops {
		if op.kind != ' ' {
			n++
		}
	}
	return n
}

// hunks groups ops into [start, end) ranges of changes with their context;
// changes closer than 2*ctxLines lines share a hunk.
func hunks(ops []lineOp) [][2]int {
	var out [][2]int
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start, end := max(0, i-ctxLines), i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run-end > 2*ctxLines || run == len(ops) {
				end = min(len(ops), end+ctxLines)
				break
			}
			end = run
		}
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

// align matches a common prefix and suffix, then aligns the middle by a
// longest common subsequence when it is small enough.
func align(a, b []string) []lineOp {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ops := make([]lineOp, 0, len(a)+len(b)-p-s)
	for i := 0; i < p; i++ {
		ops = append(ops, lineOp{' ', a[i], i, i})
	}
	ops = append(ops, middle(a[p:len(a)-s], b[p:len(b)-s], p)...)
	for i := 0; i < s; i++ {
		ai, bi := len(a)-s+i, len(b)-s+i
		ops = append(ops, lineOp{' ', a[ai], ai, bi})
	}
	return ops
}

func middle(a, b []string, off int) []lineOp {
	var ops []lineOp
	if len(a)*len(b) > maxLCSCells {
		for i, l := range a {
			ops = append(ops, lineOp{'-', l, off + i, off})
		}
		for j, l := range b {
			ops = append(ops, lineOp{'+', l, off + len(a), off + j})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i], off + i, off + j})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, lineOp{'-', a[i], off + i, off + j})
			i++
		default:
			ops = append(ops, lineOp{'+', b[j], off + i, off + j})
			j++
		}
	}
	return ops
}

// Changed counts the lines removed and added from a to b, as Unified
// would show them (a changed line counts twice: once removed, once added).
func Changed(a, b []string) int { return countChanged(align(a, b)) }
