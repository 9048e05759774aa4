package doc

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

// slowParse decodes fm with the general YAML parser only.
func slowParse(fm []byte) (*yaml.Node, error) {
	var docNode yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(fm)).Decode(&docNode); err != nil {
		return nil, err
	}
	if len(docNode.Content) != 1 {
		return nil, fmt.Errorf("no root")
	}
	return docNode.Content[0], nil
}

// diffNodes describes the first difference between two trees, or "".
func diffNodes(path string, a, b *yaml.Node) string {
	if a == nil || b == nil {
		if a != b {
			return path + ": nil mismatch"
		}
		return ""
	}
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value ||
		a.Line != b.Line || a.Column != b.Column || a.Anchor != b.Anchor ||
		a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment ||
		len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: fast {k=%d s=%d t=%s v=%q l=%d c=%d n=%d} yaml {k=%d s=%d t=%s v=%q l=%d c=%d n=%d}",
			path, a.Kind, a.Style, a.Tag, a.Value, a.Line, a.Column, len(a.Content),
			b.Kind, b.Style, b.Tag, b.Value, b.Line, b.Column, len(b.Content))
	}
	for i := range a.Content {
		if d := diffNodes(fmt.Sprintf("%s/%d", path, i), a.Content[i], b.Content[i]); d != "" {
			return d
		}
	}
	return ""
}

// checkFastAgainstYAML fails if the fast path accepts fm but disagrees with
// the YAML library. It reports whether the fast path accepted.
func checkFastAgainstYAML(t *testing.T, fm []byte) bool {
	t.Helper()
	fast, ok := fastParse(fm)
	if !ok {
		return false
	}
	slow, err := slowParse(fm)
	if err != nil {
		t.Fatalf("fast path accepted input the YAML library rejects (%v):\n%s", err, fm)
	}
	if d := diffNodes("", fast, slow); d != "" {
		t.Fatalf("fast path differs: %s\ninput:\n%s", d, fm)
	}
	return true
}

var fastCases = []string{
	"type: A\n",
	"type: A\ntitle: B\n",
	"  indented: root\n  second: x\n",
	"a:\n  b: 1\n  c:\n    d: true\n",
	"tags:\n- a\n- b\nnext: 1\n",
	"tags:\n  - a\n  - b\n",
	"sources:\n  - id: x\n    resource: https://x.example/a?b=c\n  - id: y\n    resource: r\n",
	"sources:\n- title: 'A: b'\n  id: x\n",
	"e: []\nf: {}\ng: [a, b , c,]\nh: { by: human:a@b, at: 2026-06-30T14:00:00Z }\n",
	"p:\n  - { name: year, type: integer, required: true }\n",
	"n: [[a, b], {c: d}, 'x', \"y\"]\n",
	"description: Contains data from the `x`\n  dataset and more\n\n  after blank\n",
	"description: one\n  two\n\n\n  three\nnext: x\n",
	"k:\n  value on next line\n  continued\n",
	"null1:\nnull2:   \nn3: ~\nb: yes\nc: True\ni: 0x1F\nf: 1.5e3\nd: 2026-06-30\nt: 2026-06-30T14:00:00Z\nm: -1\ns: -foo\n",
	"q1: 'it''s'\nq2: \"double\"\nq3: ''\n",
	"seq:\n-\n- x\n-   spaced\n",
	"- a\n",
	"a: b: c\n",
	"a: [unclosed\n",
	"a: 'unclosed\n",
	"a: x\n b: y\n",
	"a:\n  b: 1\n c: 2\n",
	"a: 1\n- b\n",
	"a:\n- x\n  - y\n",
	"- - a\n",
	"a:\n  - - x\n    - y\n  - z\n",
	"a:\n  - b: 1\n    c: 2\n  - d: 3\n",
	"a: b]\nc: d}\ne: f,g\n",
	"a: x - y\n  - z\n  [w]\n",
	"a: {b: c, d}\n",
	"a: {b: }\n",
	"a: [b: c]\n",
	"a: {b:c}\n",
	"a: [a:b]\n",
	"ü: ä\nkey: ö [x]\nlist: [ä, 'ö']\n",
	"a: \"x\" y\n",
	"a: 'x'  \n",
	"<<: x\n",
	"a: -\n",
	"a: ?x\n",
	"a: x:\n",
	"a: x\n\n\n",
	"a: |\n  x\n",
	"a: >\n  x\n",
	"a: !tag x\n",
	"a: &x y\n",
	"a: 'multi\n  line'\n",
	"a:\n  - x\n  -\n  - y: 1\n",
	"a: -.inf\nb: .5\nc: +1\nd: 0o17\ne: 1_000\nf: 0b101\ng: .nan\n",
	"a: 2026-06-30 14:00:00\nb: 2026-6-3\n",
	"a: b\nc: d\n---\n",
	"a : b\n",
	"a:  b\n",
	"a:\n\n  b: 1\n",
	"key with spaces: v\n",
	"a: ~x\n",
	"a: [x, y\n  , z]\n",
	"a:\n  b\n  c: d\n",
	"-x: 1\n",
	"a: '' ''\n",
	"a: x,\n",
	"a: [ ]\n",
	"a: { }\n",
	"a: [,]\n",
	"a: [x,,y]\n",
	"x: 1\n  y\n",
	"a:\n  -\n    b: 1\n",
	"a:\n  - \n    b\n",
	"a: - b\n",
	"a: [- b]\n",
	"a: [-b]\n",
	"a: 'x''\n",
	"k: v\n\t\n",
	"0: [0?]\n",
	"0: {0: 0?}\n",
	"a: [x?y]\n",
	"a: x?y\n",
}

func TestFastPathMatchesYAML(t *testing.T) {
	accepted := 0
	for _, c := range fastCases {
		if checkFastAgainstYAML(t, []byte(c)) {
			accepted++
		}
	}
	t.Logf("fast path accepted %d of %d cases", accepted, len(fastCases))
}

func TestFastPathFixtures(t *testing.T) { checkFastPathFixtures(t, okftest.Own()) }

// checkFastPathFixtures: the fast path agrees with yaml.v3 on every
// fixture frontmatter it accepts, and accepts at least 90% of them.
func checkFastPathFixtures(t *testing.T, fsys fs.FS) {
	fast, total := 0, 0
	for _, f := range loadFixtures(t, fsys) {
		d, err := Parse(f.data, Limits{})
		if err != nil || !d.HasFrontmatter() || len(bytes.TrimSpace(d.Frontmatter())) == 0 {
			continue
		}
		total++
		if checkFastAgainstYAML(t, d.Frontmatter()) {
			fast++
		}
	}
	t.Logf("fast path handled %d of %d fixture frontmatters", fast, total)
	if total == 0 || fast*10 < total*9 {
		t.Errorf("fast path handled only %d of %d fixture frontmatters", fast, total)
	}
}

func FuzzFastPath(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c))
	}
	for _, s := range []string{benchFrontmatter()} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, fm []byte) {
		if len(fm) > 4096 || strings.Count(string(fm), "\n") > 200 || !utf8.Valid(fm) {
			return
		}
		checkFastAgainstYAML(t, fm)
	})
}

func benchFrontmatter() string {
	d, err := Parse(benchConcept, Limits{})
	if err != nil {
		panic(err)
	}
	return string(d.Frontmatter())
}
