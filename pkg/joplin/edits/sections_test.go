package edits

import (
	"reflect"
	"testing"
)

func TestSectionAndOutlineFollowTheEditRules(t *testing.T) {
	body := "# Top\nintro\n## A\na1\n```\n## not a heading\n```\n### A.1\ndeep\n## B\nb\n"
	got, err := Section(body, "## A")
	if err != nil || got != "## A\na1\n```\n## not a heading\n```\n### A.1\ndeep\n" {
		t.Fatalf("section A: %q, %v", got, err)
	}
	if got, err := Section(body, "B"); err != nil || got != "## B\nb\n" {
		t.Fatalf("section B: %q, %v", got, err)
	}
	if _, err := Section(body, "missing"); err == nil || err.Error() != "heading is missing" {
		t.Fatalf("missing: %v", err)
	}
	if _, err := Section("# X\n# X\n", "X"); err == nil || err.Error() != "heading appears 2 times" {
		t.Fatalf("twice: %v", err)
	}
	want := []OutlineEntry{
		{Level: 1, Text: "Top", Line: 1, Bytes: len(body)},
		{Level: 2, Text: "A", Line: 3, Bytes: 46},
		{Level: 3, Text: "A.1", Line: 8, Bytes: 13},
		{Level: 2, Text: "B", Line: 10, Bytes: 7},
	}
	if got := Outline(body); !reflect.DeepEqual(got, want) {
		t.Fatalf("outline:\n%+v\nwant\n%+v", got, want)
	}
}
