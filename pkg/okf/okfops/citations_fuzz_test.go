package okfops

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCitations: the legacy citation scanner and the numbered-reference
// rewriter never panic, keep spans inside the body, and the rewriter only
// ever turns "[N]" into "[^id]".
func FuzzCitations(f *testing.F) {
	f.Add("Intro.\n\n# Citations\n- https://example.com/a\n- [T](https://example.com/b)\n")
	f.Add("See [1] and `[2]`.\n\n# Citations\n[1] [A](https://a.example/x)\n[2] prose only\n\n## Next\n")
	f.Add("```\n# Citations\n```\n# citations\n  continued\n")
	f.Fuzz(func(t *testing.T, body string) {
		sec, ok := findCitations([]byte(body))
		if ok && (sec.start < 0 || sec.end > len(body) || sec.start > sec.end) {
			t.Fatalf("section span %d..%d outside a %d-byte body", sec.start, sec.end, len(body))
		}
		labels := map[int]string{}
		for i, c := range sec.items {
			if c.parsed && !strings.HasPrefix(c.resource, "http") {
				t.Fatalf("parsed citation with resource %q", c.resource)
			}
			if c.label > 0 {
				labels[c.label] = citationID(c.resource, map[string]bool{}) + string(rune('a'+i%26))
			}
		}
		out, n := replaceNumberedRefs(body, labels)
		if n == 0 && out != body && utf8.ValidString(body) {
			t.Fatal("text changed without a rewritten reference")
		}
		if strings.Count(out, "[^") < n {
			t.Fatalf("%d references reported, fewer present", n)
		}
	})
}
