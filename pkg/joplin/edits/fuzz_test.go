package edits

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzApply: any body and edit either apply or give a Problem; appends and
// prepends keep the body; a CRLF body stays CRLF; an edit by heading never
// touches a fenced code block that only looks like a heading.
func FuzzApply(f *testing.F) {
	seeds := []struct {
		body, find, heading, text string
		op                        uint8
		count                     int
	}{
		{"# A\nx\n## B\ny\n", "x", "A", "z", 0, 1},
		{"# A\r\nx\r\n# B\r\n", "x\n", "## B", "q\nr", 1, 1},
		{"```\n# A\n```\n# A\n", "", "A", "new", 2, 0},
		{"~~~\n# A\n~~~~\n", "A", "# A", "", 3, 2},
		{"Café ✓ ü\n# ü ✓\n", "✓", "ü ✓", "ß", 4, 2},
		{"", "", "", "", 5, 0},
		{"#\n#\n", "#", "#", "#", 1, 3},
		{"  ### Title ###  \r\nbody", "\r", "Title", "\r\n", 2, 1},
	}
	for _, s := range seeds {
		f.Add(s.body, s.find, s.heading, s.text, s.op, s.count)
	}
	f.Fuzz(func(t *testing.T, body, find, heading, text string, op uint8, count int) {
		e := Edit{Op: Ops[int(op)%len(Ops)], Find: find, Heading: heading, Text: text, Count: count % 5}
		got, err := Apply(body, e)
		if err != nil {
			if _, ok := err.(*Problem); !ok {
				t.Fatalf("not a Problem: %v", err)
			}
			return
		}
		switch e.Op {
		case Append:
			if !strings.HasPrefix(got, body) {
				t.Fatal("append lost the body")
			}
		case Prepend:
			if !strings.HasSuffix(got, body) {
				t.Fatal("prepend lost the body")
			}
		}
		if utf8.ValidString(body) && utf8.ValidString(text) && utf8.ValidString(find) && !utf8.ValidString(got) {
			t.Fatal("valid UTF-8 in, invalid out")
		}
		// A body with only CRLF breaks, edited with text free of lone CRs,
		// has only CRLF breaks afterwards.
		if onlyCRLF(body) && strings.Contains(body, "\r\n") && !strings.Contains(text, "\r") && !strings.Contains(find, "\r") && !onlyCRLF(got) {
			t.Fatalf("CRLF lost: %q -> %q", body, got)
		}
		// Inside a fence nothing is a heading.
		if !hasFenceLine(body) {
			if hs := Headings(Lines("```\n" + body + "\n```\n")); len(hs) != 0 {
				t.Fatalf("heading inside a fence: %q", body)
			}
		}
	})
}

// FuzzDiff: Diff stays within its bound and is empty for equal texts;
// textdiff.FuzzUnified checks the line accounting.
func FuzzDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", 1000)
	f.Add("x", "", 40)
	f.Add("1\r\n2\r\n", "1\r\n3\r\n", 10)
	f.Fuzz(func(t *testing.T, a, b string, maxBytes int) {
		maxBytes = 1 + abs(maxBytes)%4096
		d, cut := Diff("n", a, b, maxBytes)
		if len(d) > maxBytes {
			t.Fatalf("%d bytes over the bound %d", len(d), maxBytes)
		}
		if a == b && (d != "" || cut != 0) {
			t.Fatal("diff of equal texts")
		}
		if a != b && d == "" && cut == 0 {
			t.Fatal("different texts, no diff and nothing cut")
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func onlyCRLF(s string) bool {
	return strings.Count(s, "\n") == strings.Count(s, "\r\n")
}

// hasFenceLine reports whether a line of s could open or close a fence.
func hasFenceLine(s string) bool {
	for _, l := range Lines(s) {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			return true
		}
	}
	return false
}
