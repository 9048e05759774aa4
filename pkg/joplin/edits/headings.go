package edits

import (
	"strings"

	"github.com/notebridge/notebridge/pkg/internal/textdiff"
)

// Heading is one ATX heading of a body, outside fenced code blocks.
type Heading struct {
	Line  int // index in Lines(body)
	Level int // 1 to 6
	Text  string
}

// Lines splits s after each "\n"; every line keeps its line break (the
// last may have none). An empty s has no lines.
func Lines(s string) []string { return textdiff.Lines(s) }

// Headings lists the ATX headings of lines, skipping fenced code blocks
// (``` or ~~~ fences, CommonMark rules for opening and closing). Setext
// headings are not recognised.
func Headings(lines []string) []Heading {
	var out []Heading
	var fence string // the open fence's marker run, "" outside a fence
	for i, raw := range lines {
		l := strings.TrimRight(raw, "\r\n")
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if indent > 3 {
			continue
		}
		t := l[indent:]
		if fence != "" {
			if run := markerRun(t); run != "" && run[0] == fence[0] && len(run) >= len(fence) && strings.TrimSpace(t[len(run):]) == "" {
				fence = ""
			}
			continue
		}
		if run := markerRun(t); run != "" && !(run[0] == '`' && strings.Contains(t[len(run):], "`")) {
			fence = run
			continue
		}
		if level, text, ok := atx(t); ok {
			out = append(out, Heading{Line: i, Level: level, Text: text})
		}
	}
	return out
}

// markerRun returns the run of three or more backticks or tildes t starts
// with, or "".
func markerRun(t string) string {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// atx parses t (indentation removed) as an ATX heading: 1 to 6 "#", then a
// space, a tab or the end; the text is trimmed and loses a closing run of
// "#" that follows a space.
func atx(t string) (level int, text string, ok bool) {
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(t[level:])
	if j := strings.TrimRight(text, "#"); j != text && (j == "" || strings.HasSuffix(j, " ") || strings.HasSuffix(j, "\t")) {
		text = strings.TrimSpace(j)
	}
	return level, text, true
}
