// Package edits applies surgical text edits to a Markdown note body:
// replace an exact string a known number of times, replace or delete the
// section under an ATX heading, insert after a heading, append, prepend.
// It keeps the body's line endings (CRLF stays CRLF), and lines inside
// fenced code blocks are never taken for headings. It also renders bounded
// unified diffs (diff.go). It does no I/O.
package edits

import (
	"fmt"
	"strings"
)

// The edit operations.
const (
	Replace       = "replace"
	SetSection    = "set_section"
	DeleteSection = "delete_section"
	InsertAfter   = "insert_after"
	Append        = "append"
	Prepend       = "prepend"
)

// Ops lists the edit operations, in documentation order.
var Ops = []string{Replace, SetSection, DeleteSection, InsertAfter, Append, Prepend}

// Edit is one text edit. Find and Count serve Replace (Count 0 means 1);
// Heading serves the section operations; Text is the new text.
type Edit struct {
	Op      string
	Find    string
	Heading string
	Text    string
	Count   int
}

// Problem is an edit that cannot apply to the body: no match, an
// unexpected number of matches, a heading missing or repeated. Its message
// quotes neither the body nor the edit.
type Problem struct{ Reason string }

func (p *Problem) Error() string { return p.Reason }

func problem(format string, args ...any) error {
	return &Problem{Reason: fmt.Sprintf(format, args...)}
}

// Apply returns body with e applied, or a *Problem.
func Apply(body string, e Edit) (string, error) {
	eol := EOL(body)
	text := withEOL(e.Text, eol)
	switch e.Op {
	case Replace:
		return replace(body, e.Find, text, e.Count, eol)
	case Append:
		if body != "" && !strings.HasSuffix(body, "\n") && text != "" {
			body += eol
		}
		return body + text, nil
	case Prepend:
		return terminated(text, eol) + body, nil
	case SetSection, DeleteSection, InsertAfter:
		return section(body, e.Op, e.Heading, text, eol)
	}
	return "", problem("unknown edit op")
}

// EOL returns the body's line ending: "\r\n" when most of its line breaks
// are CRLF, else "\n".
func EOL(body string) string {
	crlf := strings.Count(body, "\r\n")
	if crlf > 0 && crlf >= strings.Count(body, "\n")-crlf {
		return "\r\n"
	}
	return "\n"
}

// withEOL rewrites every line break of s as eol.
func withEOL(s, eol string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if eol == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", eol)
}

// terminated returns s ending with a line break, unless s is empty.
func terminated(s, eol string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + eol
}

func replace(body, find, text string, want int, eol string) (string, error) {
	if find == "" {
		return "", problem("find is empty")
	}
	if want == 0 {
		want = 1
	}
	n := strings.Count(body, find)
	if n == 0 {
		// The caller may have written the body's line breaks differently.
		if alt := withEOL(find, eol); alt != find {
			find, n = alt, strings.Count(body, alt)
		}
	}
	switch {
	case n == 0:
		return "", problem("find has no match")
	case n != want:
		return "", problem("find has %d matches, expected %d", n, want)
	}
	return strings.ReplaceAll(body, find, text), nil
}

func section(body, op, heading, text, eol string) (string, error) {
	lines := Lines(body)
	at, end, err := findSection(lines, heading)
	if err != nil {
		return "", err
	}
	head := lines[at]
	if !strings.HasSuffix(head, "\n") {
		head += eol
	}
	var b strings.Builder
	b.Grow(len(body) + len(text) + 2)
	for _, l := range lines[:at] {
		b.WriteString(l)
	}
	switch op {
	case InsertAfter:
		b.WriteString(head)
		b.WriteString(terminated(text, eol))
		for _, l := range lines[at+1:] {
			b.WriteString(l)
		}
	case SetSection:
		// Blank lines closing the section stay: they separate it from the
		// next heading.
		keep := end
		for keep > at+1 && strings.TrimSpace(lines[keep-1]) == "" {
			keep--
		}
		b.WriteString(head)
		if end < len(lines) || keep < end || strings.HasSuffix(body, "\n") {
			b.WriteString(terminated(text, eol))
		} else {
			b.WriteString(text)
		}
		for _, l := range lines[keep:] {
			b.WriteString(l)
		}
	case DeleteSection:
		for _, l := range lines[end:] {
			b.WriteString(l)
		}
	}
	return b.String(), nil
}

// parseHeadingArg splits "## Title" into level 2 and "Title"; a bare
// "Title" matches any level.
func parseHeadingArg(s string) (level int, text string) {
	s = strings.TrimSpace(s)
	if l, t, ok := atx(s); ok {
		return l, t
	}
	return 0, s
}
