package bundle_test

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

func TestConceptPathAccepts(t *testing.T) {
	for _, id := range []string{
		"tables/orders",
		"references/metrics/avg_pageviews",
		"events_",
		"gross-margin-legacy",
		"a/index/b", // reserved names only matter for the last segment
		"a/log/b",
		"index_v2",
		"indexes",
		"logs/x",
		"café/crème",
		"日本語/メモ",
		"e\u0301", // combining mark
		"v1.2/notes~draft+x@y",
		"with space/in middle",
		"x",
		"0",
		"a.md.bak", // only a trailing .md is refused
		"a.md/b",
		strings.Repeat("a", 200),
		strings.Repeat("abcdefg/", 63) + "abcdefg", // 511 bytes
	} {
		p, err := bundle.ConceptPath(id)
		if err != nil {
			t.Errorf("ConceptPath(%q) = %v, want ok", id, err)
			continue
		}
		if p != id+".md" {
			t.Errorf("ConceptPath(%q) = %q, want %q", id, p, id+".md")
		}
		if got := bundle.IDOf(p); got != id {
			t.Errorf("IDOf(ConceptPath(%q)) = %q", id, got)
		}
	}
}

func TestConceptPathRejects(t *testing.T) {
	tests := []struct {
		id, reason string
	}{
		{"", "empty"},
		{"/abs", "absolute"},
		{"/", "absolute"},
		{"a/../b", "dot_segment"},
		{"../x", "dot_segment"},
		{"a/..", "dot_segment"},
		{".", "dot_segment"},
		{"a/./b", "dot_segment"},
		{".okf/journal", "hidden_segment"},
		{".okf", "hidden_segment"},
		{"a/.hidden", "hidden_segment"},
		{"...", "hidden_segment"},
		{"index", "reserved_name"},
		{"log", "reserved_name"},
		{"sub/log", "reserved_name"},
		{"a/b/index", "reserved_name"},
		{"INDEX", "reserved_name"},
		{"Log", "reserved_name"},
		{"x.md", "has_md_suffix"},
		{"x.MD", "has_md_suffix"},
		{"a/index.md", "has_md_suffix"},
		{"a//b", "empty_segment"},
		{"a/", "empty_segment"},
		{"a\\b", "bad_character"},
		{"a\x00b", "bad_character"},
		{"a\tb", "bad_character"},
		{"a\nb", "bad_character"},
		{"a\rb", "bad_character"},
		{"a\x1bb", "bad_character"},
		{"a\x7fb", "bad_character"},
		{"a\u0085b", "bad_character"}, // C1 control
		{"a\u202eb", "bad_character"}, // bidi override
		{"a\u00a0b", "bad_character"}, // no-break space
		{"a:b", "bad_character"},
		{"a*b", "bad_character"},
		{"a?b", "bad_character"},
		{"a\"b", "bad_character"},
		{"a<b>", "bad_character"},
		{"a|b", "bad_character"},
		{"a%2fb", "bad_character"},
		{"\xff", "not_utf8"},
		{"a/\xc3", "not_utf8"},
		{strings.Repeat("a", 600), "too_long"},
		{strings.Repeat("ab/", 200), "too_long"},
		{strings.Repeat("a", 201), "segment_too_long"},
		{"a/ b", "edge_space"},
		{"a /b", "edge_space"},
		{" ", "edge_space"},
		{"x ", "edge_space"},
	}
	for _, tc := range tests {
		p, err := bundle.ConceptPath(tc.id)
		if err == nil {
			t.Errorf("ConceptPath(%q) = %q, want reason %s", tc.id, p, tc.reason)
			continue
		}
		de, ok := domainerr.As(err)
		if !ok {
			t.Errorf("ConceptPath(%q) error %T is not a domain error", tc.id, err)
			continue
		}
		if de.Code != domainerr.InvalidArgument {
			t.Errorf("ConceptPath(%q) code %s, want INVALID_ARGUMENT", tc.id, de.Code)
		}
		if de.Details["reason"] != tc.reason || de.Details["field"] != "concept_id" {
			t.Errorf("ConceptPath(%q) details %v, want reason %s field concept_id", tc.id, de.Details, tc.reason)
		}
		if !strings.Contains(de.Message, tc.reason) {
			t.Errorf("ConceptPath(%q) message %q lacks the reason", tc.id, de.Message)
		}
		// The message never echoes the caller's id.
		if len(tc.id) > 3 && strings.Contains(de.Message, tc.id) {
			t.Errorf("ConceptPath(%q) message echoes the id: %q", tc.id, de.Message)
		}
		if p != "" {
			t.Errorf("ConceptPath(%q) returned %q with an error", tc.id, p)
		}
	}
}

func TestIDOf(t *testing.T) {
	tests := map[string]string{
		"tables/orders.md":   "tables/orders",
		"a.md":               "a",
		"café/crème.md":      "café/crème",
		"a/index/b.md":       "a/index/b",
		"index.md":           "",
		"log.md":             "",
		"a/log.md":           "",
		"a/INDEX.md":         "",
		"x.py":               "",
		"x":                  "",
		"x.MD":               "",
		"x.md.md":            "",
		".md":                "",
		".okf/x.md":          "",
		"a/.hidden.md":       "",
		"a/.hidden/x.md":     "",
		"/abs.md":            "",
		"../x.md":            "",
		"a//b.md":            "",
		"a\\b.md":            "",
		"a b.md":             "a b",
		"a /b.md":            "",
		"":                   "",
		"z.txt":              "",
		"a/b c~d.md":         "a/b c~d",
		"a\x00.md":           "",
		"references/x.md":    "references/x",
		"x" + "\xff" + ".md": "",
	}
	for rel, want := range tests {
		if got := bundle.IDOf(rel); got != want {
			t.Errorf("IDOf(%q) = %q, want %q", rel, got, want)
		}
	}
}

// checkConceptPath asserts the safety properties of an accepted id's path.
func checkConceptPath(t *testing.T, id, p string) {
	t.Helper()
	if !strings.HasSuffix(p, ".md") {
		t.Fatalf("ConceptPath(%q) = %q lacks .md", id, p)
	}
	parts, err := safefs.SplitRel(p)
	if err != nil {
		t.Fatalf("ConceptPath(%q) = %q refused by SplitRel: %v", id, p, err)
	}
	for _, c := range parts {
		if c == "." || c == ".." || strings.HasPrefix(c, ".") {
			t.Fatalf("ConceptPath(%q) = %q has component %q", id, p, c)
		}
	}
	last := strings.TrimSuffix(parts[len(parts)-1], ".md")
	if strings.EqualFold(last, "index") || strings.EqualFold(last, "log") {
		t.Fatalf("ConceptPath(%q) = %q names a reserved file", id, p)
	}
	if filepath.Clean(p) != p || filepath.IsAbs(p) {
		t.Fatalf("ConceptPath(%q) = %q is not clean and relative", id, p)
	}
	if !utf8.ValidString(p) || strings.ContainsAny(p, "\x00\\") {
		t.Fatalf("ConceptPath(%q) = %q has a bad byte", id, p)
	}
	if got := bundle.IDOf(p); got != id {
		t.Fatalf("IDOf(ConceptPath(%q)) = %q", id, got)
	}
}

// FuzzConceptPath: for any string ConceptPath never panics, and an
// accepted id maps to a safe, clean, relative, non-hidden, non-reserved
// Markdown path that IDOf maps back.
func FuzzConceptPath(f *testing.F) {
	for _, s := range []string{
		"tables/orders", "a/../b", "../x", ".okf/journal", "index", "INDEX", "x.md",
		"a//b", "a\\b", "a\x00b", "café/crème", "a/ b", "/abs", "a/index/b", "İNDEX",
		"\u212a", "log.", "index ", "a/..b", "~", "+@", strings.Repeat("x/", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		p, err := bundle.ConceptPath(id)
		if err != nil {
			if p != "" {
				t.Fatalf("ConceptPath(%q) returned %q with error %v", id, p, err)
			}
			if de, ok := domainerr.As(err); !ok || de.Code != domainerr.InvalidArgument {
				t.Fatalf("ConceptPath(%q) error %v is not INVALID_ARGUMENT", id, err)
			}
			if bundle.IDOf(id+".md") != "" {
				t.Fatalf("IDOf(%q) accepts an id ConceptPath refuses", id+".md")
			}
			return
		}
		checkConceptPath(t, id, p)
	})
}
