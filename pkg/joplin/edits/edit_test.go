package edits

import (
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	const doc = "# Title\n\nintro\n\n## Plans\n\n- a\n- b\n\n## Done\n\nold\n"
	cases := []struct {
		name, body string
		e          Edit
		want       string
		problem    string
	}{
		{"replace once", doc, Edit{Op: Replace, Find: "- a", Text: "- A"}, strings.Replace(doc, "- a", "- A", 1), ""},
		{"replace counted", "x y x", Edit{Op: Replace, Find: "x", Text: "z", Count: 2}, "z y z", ""},
		{"replace ambiguous", "x y x", Edit{Op: Replace, Find: "x", Text: "z"}, "", "find has 2 matches, expected 1"},
		{"replace no match", doc, Edit{Op: Replace, Find: "nothing", Text: "z"}, "", "find has no match"},
		{"replace empty find", doc, Edit{Op: Replace, Text: "z"}, "", "find is empty"},
		{"replace LF find in CRLF body", "a\r\nb\r\nc\r\n", Edit{Op: Replace, Find: "a\nb", Text: "x\ny"}, "x\r\ny\r\nc\r\n", ""},
		{"set section keeps blank separator", doc, Edit{Op: SetSection, Heading: "Plans", Text: "- c"},
			"# Title\n\nintro\n\n## Plans\n- c\n\n## Done\n\nold\n", ""},
		{"set section at end", doc, Edit{Op: SetSection, Heading: "## Done", Text: "new\n"},
			"# Title\n\nintro\n\n## Plans\n\n- a\n- b\n\n## Done\nnew\n", ""},
		{"set section spans subsections", "# A\nx\n## B\ny\n# C\nz\n", Edit{Op: SetSection, Heading: "A", Text: "q"}, "# A\nq\n# C\nz\n", ""},
		{"delete section", doc, Edit{Op: DeleteSection, Heading: "Plans"}, "# Title\n\nintro\n\n## Done\n\nold\n", ""},
		{"insert after heading", doc, Edit{Op: InsertAfter, Heading: "Done", Text: "new"},
			"# Title\n\nintro\n\n## Plans\n\n- a\n- b\n\n## Done\nnew\n\nold\n", ""},
		{"insert after last line without newline", "# A", Edit{Op: InsertAfter, Heading: "A", Text: "x"}, "# A\nx\n", ""},
		{"heading level must match when given", doc, Edit{Op: DeleteSection, Heading: "### Plans"}, "", "heading is missing"},
		{"heading missing", doc, Edit{Op: DeleteSection, Heading: "Nope"}, "", "heading is missing"},
		{"heading twice", "# A\n# A\n", Edit{Op: DeleteSection, Heading: "A"}, "", "heading appears 2 times"},
		{"heading inside fence ignored", "# A\n```\n# A\n```\n", Edit{Op: SetSection, Heading: "A", Text: "x"}, "# A\nx\n", ""},
		{"tilde fence", "~~~~\n# B\n~~~\n# B?\n~~~~\n# B\n", Edit{Op: DeleteSection, Heading: "B"}, "~~~~\n# B\n~~~\n# B?\n~~~~\n", ""},
		{"closing hashes", "## Plans ##\nx\n", Edit{Op: DeleteSection, Heading: "Plans"}, "", ""},
		{"not a heading without space", "#tag\n", Edit{Op: DeleteSection, Heading: "tag"}, "", "heading is missing"},
		{"append adds line break", "a", Edit{Op: Append, Text: "b"}, "a\nb", ""},
		{"append empty body", "", Edit{Op: Append, Text: "b"}, "b", ""},
		{"prepend", "a\n", Edit{Op: Prepend, Text: "b"}, "b\na\n", ""},
		{"CRLF preserved", "# A\r\nx\r\n# B\r\n", Edit{Op: SetSection, Heading: "A", Text: "1\n2"}, "# A\r\n1\r\n2\r\n# B\r\n", ""},
		{"CRLF append", "a\r\n", Edit{Op: Append, Text: "b\nc\n"}, "a\r\nb\r\nc\r\n", ""},
		{"unicode heading", "# Café ✓\nx\n", Edit{Op: SetSection, Heading: "Café ✓", Text: "y"}, "# Café ✓\ny\n", ""},
		{"unknown op", "a", Edit{Op: "bogus"}, "", "unknown edit op"},
		{"empty heading", "a", Edit{Op: InsertAfter, Heading: "  "}, "", "heading is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Apply(c.body, c.e)
			if c.problem != "" {
				if _, ok := err.(*Problem); !ok || err.Error() != c.problem {
					t.Fatalf("want problem %q, got %q, %v", c.problem, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	a := strings.Repeat("line\n", 100)
	b := strings.Replace(a, "line\n", "LINE\n", 1)
	d, cut := Diff("body", a, b, 1<<10)
	want := "--- a/body\n+++ b/body\n@@ -1,4 +1,4 @@\n-line\n+LINE\n line\n line\n line\n"
	if d != want || cut != 0 {
		t.Fatalf("diff %q cut %d", d, cut)
	}
	if d, cut := Diff("body", a, a, 10); d != "" || cut != 0 {
		t.Fatal("equal texts have a diff")
	}
	big := strings.ReplaceAll(a, "line", "other")
	d, cut = Diff("body", a, big, 200)
	if len(d) > 200 || cut == 0 || countPrefixed(d, "-")+countPrefixed(d, "+")-2+cut != 200 {
		t.Fatalf("bounded diff: %d bytes, cut %d\n%s", len(d), cut, d)
	}
	d, _ = Diff("t", "x", "y", 1<<10)
	if !strings.Contains(d, "\\ No newline at end of file") {
		t.Fatalf("missing newline marker: %q", d)
	}
}

func countPrefixed(d, p string) int {
	n := 0
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, p) {
			n++
		}
	}
	return n
}
