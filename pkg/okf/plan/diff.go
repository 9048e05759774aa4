package plan

import (
	"fmt"
	"strings"
)

// MaxDiffBytes bounds one file's diff text in a preview.
const MaxDiffBytes = 64 << 10

// Diff renders a unified diff (3 lines of context) from before to after,
// labelled with path. nil before or after means the file is absent. It is
// cut at MaxDiffBytes with a final "... diff truncated" line.
func Diff(path string, before, after []byte) string {
	a, b := splitLines(before), splitLines(after)
	from, to := "a/"+path, "b/"+path
	if before == nil {
		from = "/dev/null"
	}
	if after == nil {
		to = "/dev/null"
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	ops := lineOps(a, b)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(ops) {
				end = min(len(ops), end+ctx)
				break
			}
			end = run
		}
		aStart, bStart, aLen, bLen := ops[start].ai+1, ops[start].bi+1, 0, 0
		// A hunk that adds to (or removes from) nothing names the line
		// before it, as diff(1) does.
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
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
			if out.Len() > MaxDiffBytes {
				return out.String()[:MaxDiffBytes] + "\n... diff truncated\n"
			}
		}
		i = end
	}
	return out.String()
}

type lineOp struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // 0-based line numbers in a and b at this point
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// lineOps aligns a and b: common prefix and suffix, then a longest common
// subsequence of the middle when it is small enough, else a plain
// replace of the middle.
func lineOps(a, b []string) []lineOp {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var ops []lineOp
	for i := 0; i < p; i++ {
		ops = append(ops, lineOp{' ', a[i], i, i})
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	ops = append(ops, middle(am, bm, p)...)
	for i := 0; i < s; i++ {
		ai, bi := len(a)-s+i, len(b)-s+i
		ops = append(ops, lineOp{' ', a[ai], ai, bi})
	}
	return ops
}

func middle(a, b []string, off int) []lineOp {
	var ops []lineOp
	if len(a)*len(b) > 1_000_000 {
		for i, l := range a {
			ops = append(ops, lineOp{'-', l, off + i, off})
		}
		for j, l := range b {
			ops = append(ops, lineOp{'+', l, off + len(a), off + j})
		}
		return ops
	}
	// lcs[i][j] = LCS length of a[i:], b[j:].
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
