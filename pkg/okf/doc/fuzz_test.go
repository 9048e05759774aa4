package doc

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

var fuzzSeeds = []string{
	"",
	"---",
	"---\n",
	"---\n---\n",
	"---\r\n---\r\n",
	"\ufeff---\ntype: A\n---\nbody",
	"---\ntype: A\n...\n",
	"---\ntype: A\n---  \t\n[x](y.md)",
	"---\ntype: A\ntype: B\n---\n",
	"---\na: &x 1\nb: *x\n---\n",
	"---\n<<: {a: 1}\n---\n",
	"---\n- a\n---\n",
	"---\na: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n---\n",
	"---\na: |\n  ---\n---\nbody\n",
	"---\na: 1\n--- x\nb: 2\n---\n",
	"---\ntype: A\n---\n```\n[a](b.md)\n```\n`[c](d.md)` ![e](f.png) [^g]\n\n[^g]: h\n",
	"---\ntype: \xff\n---\n",
	"---\ntype: A\r\n---\r\n# Citations\r\n- x\r\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, p := range []string{
		"v0.2-instant/fjord_rentals/computations/bookings-quarter.md",
		"v0.2-date/fjord_rentals/tables/rentals.md",
		"v0.2-date/fjord_support/tables/tickets.md",
		"v0.1/fjord_telemetry/references/metrics/rider_count.md",
	} {
		b, err := fs.ReadFile(okftest.Own(), p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	lim := Limits{MaxFrontmatterBytes: 4096, MaxDepth: 16, MaxNodes: 500}
	f.Fuzz(func(t *testing.T, src []byte) {
		d, err := Parse(src, lim)
		fo, ferr := ParseFrontmatterOnly(iotest.HalfReader(bytes.NewReader(src)), lim)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if pe.Code == CodeNotUTF8 {
				return // the header-only reader may not see the invalid bytes
			}
			var fpe *ParseError
			if !errors.As(ferr, &fpe) || fpe.Code != pe.Code {
				t.Fatalf("Parse code %s, ParseFrontmatterOnly %v", pe.Code, ferr)
			}
			return
		}
		if !utf8.Valid(src) {
			t.Fatal("accepted invalid UTF-8")
		}
		out := d.Bytes()
		if !bytes.Equal(out, src) {
			t.Fatalf("Bytes() != input")
		}
		d2, err := Parse(out, lim)
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if !bytes.Equal(d2.Frontmatter(), d.Frontmatter()) || !bytes.Equal(d2.Body(), d.Body()) || d2.HasFrontmatter() != d.HasFrontmatter() {
			t.Fatal("re-parse differs")
		}
		if ferr != nil {
			t.Fatalf("ParseFrontmatterOnly failed where Parse succeeded: %v", ferr)
		}
		if !bytes.Equal(fo.Frontmatter(), d.Frontmatter()) || fo.HasFrontmatter() != d.HasFrontmatter() {
			t.Fatal("ParseFrontmatterOnly frontmatter differs")
		}
		if !bytes.HasPrefix(src, fo.Bytes()) {
			t.Fatal("ParseFrontmatterOnly bytes are not a prefix of the input")
		}
		_ = d.Keys()
		_ = d.Project()
		_ = d.ProfileFields()
		_ = Check(d)
		for _, l := range Links(d.Body()) {
			_, _ = ResolveConceptTarget("a/b", l.Target)
		}
	})
}

func FuzzLinks(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "a/b")
	}
	f.Add([]byte("[a](../x.md) [b](</y z.md> \"t\") ![c](d) `[e](f)` [g\n](h(i)j)"), "tables/events_")
	f.Add([]byte("# Citations\n- [x](y)\n  more\n1. z\n"), "")
	f.Add([]byte("[^a] [^b]: c\n   [^d]: e [^f]"), "x")
	f.Fuzz(func(t *testing.T, body []byte, from string) {
		links := Links(body)
		for _, l := range links {
			if l.Line < 1 {
				t.Fatalf("bad line %d", l.Line)
			}
			if id, ok := ResolveConceptTarget(from, l.Target); ok {
				for _, seg := range strings.Split(id, "/") {
					if seg == "" || seg == "." || seg == ".." {
						t.Fatalf("bad id %q", id)
					}
				}
			}
		}
		_ = LegacyCitations(body)
		refs, defs := FootnoteLabels(body)
		for _, l := range append(refs, defs...) {
			if l == "" {
				t.Fatal("empty footnote label")
			}
		}
		_, _ = ResolveConceptTarget(from, string(body))
	})
}
