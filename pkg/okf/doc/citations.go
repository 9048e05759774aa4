package doc

import (
	"bytes"
	"strings"
)

// LegacyCitations returns the list items of v0.1 "# Citations" sections: the
// text after "- ", "* ", "+ ", "1. " or "1) " under a level-1 or level-2
// ATX heading named "Citations" (case-insensitive), up to the next heading
// of the same or a higher level. Fenced code is skipped; indented
// continuation lines are appended to the preceding item.
func LegacyCitations(body []byte) []string {
	items, _ := scanCitations(body)
	return items
}

// hasLegacyCitations reports whether body has a level-1 or level-2
// "Citations" heading outside fenced code.
func hasLegacyCitations(body []byte) bool {
	if bytes.IndexByte(body, '#') < 0 {
		return false
	}
	_, found := scanCitations(body)
	return found
}

func scanCitations(body []byte) (items []string, found bool) {
	var fs fenceState
	level := 0 // level of the open Citations section, 0 when none
	last := -1 // item that a continuation line extends, -1 when none
	forEachLine(body, func(line []byte, _, _ int) {
		if fs.step(line) {
			last = -1
			return
		}
		if lvl, title, ok := atxHeading(line); ok {
			if level > 0 && lvl <= level {
				level = 0
			}
			if level == 0 && lvl <= 2 && strings.EqualFold(title, "citations") {
				level, found = lvl, true
			}
			last = -1
			return
		}
		if level == 0 {
			return
		}
		if isBlank(line) {
			last = -1
			return
		}
		if item, ok := listItem(line); ok {
			if item == "" {
				last = -1
				return
			}
			items = append(items, item)
			last = len(items) - 1
			return
		}
		if last >= 0 {
			items[last] += " " + strings.TrimSpace(string(line))
		}
	})
	return items, found
}

// atxHeading parses an ATX heading line ("## Title ##").
func atxHeading(line []byte) (level int, title string, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	n := runLen(line[i:], '#')
	if n == 0 || n > 6 {
		return 0, "", false
	}
	rest := line[i+n:]
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	t := strings.TrimSpace(string(rest))
	// Drop an optional closing sequence of '#' preceded by a space.
	if k := strings.TrimRight(t, "#"); len(k) < len(t) && (k == "" || strings.HasSuffix(k, " ") || strings.HasSuffix(k, "\t")) {
		t = strings.TrimSpace(k)
	}
	return n, t, true
}

// listItem returns the text of a bullet or ordered list item line.
func listItem(line []byte) (string, bool) {
	t := trimLeftBlank(line)
	if len(t) == 0 {
		return "", false
	}
	switch t[0] {
	case '-', '*', '+':
		if len(t) == 1 {
			return "", true
		}
		if t[1] == ' ' || t[1] == '\t' {
			return strings.TrimSpace(string(t[2:])), true
		}
		return "", false
	}
	d := 0
	for d < len(t) && d < 9 && isDigit(t[d]) {
		d++
	}
	if d == 0 || d >= len(t) || (t[d] != '.' && t[d] != ')') {
		return "", false
	}
	if d+1 == len(t) {
		return "", true
	}
	if t[d+1] != ' ' && t[d+1] != '\t' {
		return "", false
	}
	return strings.TrimSpace(string(t[d+2:])), true
}

// FootnoteLabels returns the distinct footnote labels used in body, in
// order of first appearance: refs are "[^label]" references, defs are the
// labels of "[^label]:" definitions at the start of a line. Fenced code and
// inline code spans are skipped.
func FootnoteLabels(body []byte) (refs, defs []string) {
	var seenR, seenD map[string]bool
	for _, sg := range segments(body) {
		seg := body[sg.start:sg.end]
		if !bytes.Contains(seg, []byte("[^")) {
			continue
		}
		sc := spanCursor{spans: codeSpans(seg)}
		for i := 0; i < len(seg); {
			if j := sc.skip(i); j != i {
				i = j
				continue
			}
			if seg[i] == '\\' {
				i += 2
				continue
			}
			if seg[i] != '[' || i+1 >= len(seg) || seg[i+1] != '^' {
				i++
				continue
			}
			j := i + 2
			for j < len(seg) && j-i < 1000 && !isLabelStop(seg[j]) {
				j++
			}
			if j >= len(seg) || seg[j] != ']' || j == i+2 {
				i++
				continue
			}
			label := string(seg[i+2 : j])
			if j+1 < len(seg) && seg[j+1] == ':' && atLineStart(seg, i) {
				if seenD == nil {
					seenD = map[string]bool{}
				}
				if !seenD[label] {
					seenD[label] = true
					defs = append(defs, label)
				}
			} else {
				if seenR == nil {
					seenR = map[string]bool{}
				}
				if !seenR[label] {
					seenR[label] = true
					refs = append(refs, label)
				}
			}
			i = j + 1
		}
	}
	return refs, defs
}

func isLabelStop(c byte) bool {
	return c == ']' || c == '[' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// atLineStart reports whether only up to three spaces precede i on its line.
func atLineStart(seg []byte, i int) bool {
	for k := 0; k <= 3; k++ {
		if i-k == 0 || seg[i-k-1] == '\n' {
			return true
		}
		if seg[i-k-1] != ' ' {
			return false
		}
	}
	return false
}
