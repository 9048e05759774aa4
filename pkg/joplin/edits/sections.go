package edits

// findSection locates the one section heading names in lines: the
// heading's line and the end of its section (the next heading of the same
// or a higher level, or the end). heading is "## Title" (that level) or
// "Title" (any level); it must match exactly one heading.
func findSection(lines []string, heading string) (at, end int, err error) {
	wantLevel, wantText := parseHeadingArg(heading)
	if wantText == "" {
		return 0, 0, problem("heading is empty")
	}
	hs := Headings(lines)
	found, n := -1, 0
	for i, h := range hs {
		if h.Text == wantText && (wantLevel == 0 || h.Level == wantLevel) {
			if n == 0 {
				found = i
			}
			n++
		}
	}
	switch {
	case n == 0:
		return 0, 0, problem("heading is missing")
	case n > 1:
		return 0, 0, problem("heading appears %d times", n)
	}
	return hs[found].Line, sectionEnd(hs, found, len(lines)), nil
}

// sectionEnd returns the line that ends the section heading hs[i] opens:
// the next heading of the same or a higher level, or nLines.
func sectionEnd(hs []Heading, i, nLines int) int {
	for _, next := range hs[i+1:] {
		if next.Level <= hs[i].Level {
			return next.Line
		}
	}
	return nLines
}

// Section returns the section heading names in body, from its heading line
// to the next heading of the same or a higher level, with the same
// heading rules as the section edits.
func Section(body, heading string) (string, error) {
	lines := Lines(body)
	at, end, err := findSection(lines, heading)
	if err != nil {
		return "", err
	}
	n := 0
	for _, l := range lines[:at] {
		n += len(l)
	}
	m := n
	for _, l := range lines[at:end] {
		m += len(l)
	}
	return body[n:m], nil
}

// OutlineEntry is one heading of a body with the size of its section.
type OutlineEntry struct {
	Level int
	Text  string
	// Line is the heading's 1-based line number.
	Line int
	// Bytes is the size of the section the heading opens, nested
	// sections included, heading line included.
	Bytes int
}

// Outline lists body's headings in order with their section sizes.
func Outline(body string) []OutlineEntry {
	lines := Lines(body)
	hs := Headings(lines)
	offsets := make([]int, len(lines)+1)
	for i, l := range lines {
		offsets[i+1] = offsets[i] + len(l)
	}
	out := make([]OutlineEntry, 0, len(hs))
	for i, h := range hs {
		end := sectionEnd(hs, i, len(lines))
		out = append(out, OutlineEntry{Level: h.Level, Text: h.Text, Line: h.Line + 1, Bytes: offsets[end] - offsets[h.Line]})
	}
	return out
}
