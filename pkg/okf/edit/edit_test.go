package edit

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/notebridge/notebridge/pkg/okf/doc"
)

func parse(t testing.TB, s string) *doc.Document {
	t.Helper()
	d, err := doc.Parse([]byte(s), doc.DefaultLimits)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return d
}

const sample = `---
# leading comment
type: Metric   # trailing comment
title: "Revenue"
verified:
  - { by: human:a, at: 2026-07-01T09:00:00Z }  # first
  # between
  - { by: process:b, at: 2026-07-02T09:00:00Z }
sources:
  - id: s1
    resource: https://example.com/1
  - id: s2
    resource: https://example.com/2
stale_after: '2026-12-31'
custom: { keep: me }
---

Body [link](/x.md).
`

func TestSetKeyReplacesOnlyItsEntry(t *testing.T) {
	d := parse(t, sample)
	e, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetKey("title", Scalar("Net revenue")); err != nil {
		t.Fatal(err)
	}
	if err := e.SetKey("status", "draft"); err != nil {
		t.Fatal(err)
	}
	out, err := e.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(sample, `title: "Revenue"`, `title: Net revenue`, 1)
	want = strings.Replace(want, "custom: { keep: me }\n", "custom: { keep: me }\nstatus: draft\n", 1)
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestSetSequenceKeepsUntouchedItemBytes(t *testing.T) {
	d := parse(t, sample)
	e, _ := New(d)
	if err := e.SetSequence("verified", []Item{KeepItem(1), KeepItem(0), NewItem(Flow("by", "process:c", "at", "2026-07-03T00:00:00Z"))}, nil); err != nil {
		t.Fatal(err)
	}
	out, _ := e.Bytes()
	for _, keep := range []string{"  - { by: human:a, at: 2026-07-01T09:00:00Z }  # first\n  # between\n", "  - { by: process:b, at: 2026-07-02T09:00:00Z }\n", "  - { by: process:c, at: 2026-07-03T00:00:00Z }\n"} {
		if !strings.Contains(string(out), keep) {
			t.Fatalf("missing %q in\n%s", keep, out)
		}
	}
	nd := parse(t, string(out))
	if got := nd.Project().Verified; len(got) != 3 || got[0].By != "process:b" {
		t.Fatalf("verified after edit: %+v", got)
	}
	// Removing every item removes the key.
	e2, _ := New(d)
	e2.SetSequence("sources", nil, nil)
	out2, _ := e2.Bytes()
	if strings.Contains(string(out2), "sources:") || !strings.Contains(string(out2), "stale_after: '2026-12-31'\n") {
		t.Fatalf("remove all:\n%s", out2)
	}
}

func TestReplaceScalarInPlace(t *testing.T) {
	d := parse(t, sample)
	e, _ := New(d)
	if err := e.ReplaceScalar(d.Lookup("stale_after"), "2026-12-31T00:00:00Z"); err != nil {
		t.Fatal(err)
	}
	out, _ := e.Bytes()
	if string(out) != strings.Replace(sample, "'2026-12-31'", "2026-12-31T00:00:00Z", 1) {
		t.Fatalf("got:\n%s", out)
	}
}

func TestRefusals(t *testing.T) {
	cases := map[string]struct {
		src string
		do  func(e *Editor, d *doc.Document) error
	}{
		"crlf":          {"---\r\ntype: A\r\n---\r\n", nil},
		"tagged target": {"---\ntype: A\nstale_after: !!str 2026-01-01\n---\n", func(e *Editor, d *doc.Document) error { return e.SetKey("stale_after", "x") }},
		"anchored":      {"---\ntype: A\nsources: &s\n  - { id: a, resource: b }\n---\n", func(e *Editor, d *doc.Document) error { return e.SetKey("sources", "[]") }},
		"escaped scalar": {"---\ntype: A\nstale_after: \"2026\\u002d01-01\"\n---\n", func(e *Editor, d *doc.Document) error {
			return e.ReplaceScalar(d.Lookup("stale_after"), "x")
		}},
		"items share a line": {"---\ntype: A\nverified:\n  - {by: a, at: b}\n  - {by: c, at: d}\n---\n", nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := doc.Parse([]byte(c.src), doc.DefaultLimits)
			if err != nil {
				return // the parser already refuses it: fail closed
			}
			e, err := New(d)
			if err == nil && c.do != nil {
				err = c.do(e, d)
			}
			if c.do == nil && err == nil {
				return
			}
			if _, ok := err.(*Error); !ok {
				t.Fatalf("got %v, want a refusal", err)
			}
		})
	}
}

func TestScalarReadsBack(t *testing.T) {
	for _, s := range []string{"plain", "human:x@y", "2026-06-20T22:53:05Z", "true", "null", "123", "a: b", "#hash", "x, y", "- dash", "  lead", "quote\"s", "new\nline", "", "ünïcode", "[x]", "{y}", "~", "0x1F", "1e3", ".inf"} {
		src := "---\nk: " + Scalar(s) + "\n---\n"
		d, err := doc.Parse([]byte(src), doc.DefaultLimits)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		n := d.Lookup("k")
		if n.Value != s || n.ShortTag() == "!!null" && s != "" || n.ShortTag() == "!!bool" || n.ShortTag() == "!!int" || n.ShortTag() == "!!float" {
			t.Fatalf("%q renders as %q which reads back as %q (%s)", s, Scalar(s), n.Value, n.ShortTag())
		}
	}
}

// FuzzEditPreservesOtherKeys: for any document the editor accepts,
// setting one key leaves every other top-level value semantically equal
// and the result parses.
func FuzzEditPreservesOtherKeys(f *testing.F) {
	f.Add(sample, "title", "New title")
	f.Add("---\ntype: A\nx:\n- 1\n- 2\ny: z\n---\nbody\n", "x", "v")
	f.Add("---\ntype: A\n---\n", "new", "v")
	f.Add("no frontmatter\n", "type", "T")
	f.Fuzz(func(t *testing.T, src, key, value string) {
		d, err := doc.Parse([]byte(src), doc.DefaultLimits)
		if err != nil || key == "" || !utf8.ValidString(key) || !utf8.ValidString(value) || strings.ContainsAny(key, ":#{}[],&*!|>'\"%@`\n\r\t ") || strings.HasPrefix(key, "-") {
			return
		}
		e, err := New(d)
		if err != nil {
			return
		}
		if err := e.SetKey(key, Scalar(value)); err != nil {
			return
		}
		out, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		nd, err := doc.Parse(out, doc.DefaultLimits)
		if err != nil {
			t.Fatalf("edited document does not parse: %v\n%q", err, out)
		}
		if got := nd.Lookup(key); got == nil || got.Value != value {
			t.Fatalf("key not set: %q", out)
		}
		if string(nd.Body()) != string(d.Body()) {
			t.Fatal("body changed")
		}
		for _, k := range d.Keys() {
			if k == key {
				continue
			}
			a, _ := yaml.Marshal(d.Lookup(k))
			b, _ := yaml.Marshal(nd.Lookup(k))
			if string(a) != string(b) {
				t.Fatalf("key %q changed:\n%s\n->\n%s", k, a, b)
			}
		}
	})
}
