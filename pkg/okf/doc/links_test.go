package doc

import (
	"reflect"
	"strings"
	"testing"
)

func TestLinks(t *testing.T) {
	body := "# Title\n" + // 1
		"See [orders](/tables/orders.md) and [rev](../metrics/revenue.md#def \"Revenue\").\n" + // 2
		"\n" + // 3
		"```sql\n" + // 4
		"[not](a.md)\n" + // 5
		"```\n" + // 6
		"Inline `[code](x.md)` is skipped, ![img](pic.png) too.\n" + // 7
		"~~~\n" + // 8
		"[tilde](b.md)\n" + // 9
		"~~~~\n" + // 10
		"A [wrapped\n" + // 11
		"link](<with space.md>) and [paren](a_(b).md) and \\[escaped](e.md).\n" + // 12
		"    ```json\n" + // 13
		"    [in list fence](f.md)\n" + // 14
		"    ```\n" + // 15
		"[![badge](b.svg)](https://ci.example/x) [ref][1] [^note] [empty]()\n" + // 16
		"[t1](t.md 'single') [t2](t.md (paren)) [bad](t.md \"unterminated)\n" + // 17
		"``` inline ``` [after](ok.md)\n" // 18
	got := Links([]byte(body))
	want := []Link{
		{Text: "orders", Target: "/tables/orders.md", Line: 2},
		{Text: "rev", Target: "../metrics/revenue.md#def", Line: 2},
		{Text: "wrapped\nlink", Target: "with space.md", Line: 11},
		{Text: "paren", Target: "a_(b).md", Line: 12},
		{Text: "![badge](b.svg)", Target: "https://ci.example/x", Line: 16},
		{Text: "empty", Target: "", Line: 16},
		{Text: "t1", Target: "t.md", Line: 17},
		{Text: "t2", Target: "t.md", Line: 17},
		{Text: "after", Target: "ok.md", Line: 18},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Links =\n%+v\nwant\n%+v", got, want)
	}
}

func TestLinksUnclosedFenceHidesRest(t *testing.T) {
	got := Links([]byte("[a](a.md)\n```\n[b](b.md)\n"))
	if len(got) != 1 || got[0].Target != "a.md" {
		t.Fatalf("Links = %+v", got)
	}
}

func TestLinksPathological(t *testing.T) {
	inputs := []string{
		strings.Repeat("[", 50000),
		strings.Repeat("[a](", 20000),
		strings.Repeat("`", 50000),
		strings.Repeat("` ``", 20000),
		strings.Repeat("[a](x", 20000) + ")",
		strings.Repeat("[a](x \"", 20000),
		strings.Repeat("](", 30000),
	}
	for _, in := range inputs {
		_ = Links([]byte(in))
		_, _ = FootnoteLabels([]byte(in))
		_ = LegacyCitations([]byte(in))
	}
}

func TestResolveConceptTarget(t *testing.T) {
	tests := []struct {
		from, target string
		want         string
		ok           bool
	}{
		{"tables/events_", "../references/metrics/event_count.md", "references/metrics/event_count", true},
		{"tables/events_", "/tables/orders.md", "tables/orders", true},
		{"tables/events_", "orders.md", "tables/orders", true},
		{"tables/events_", "./orders.md", "tables/orders", true},
		{"metrics/gross-margin", "./gross-margin-legacy.md#x", "metrics/gross-margin-legacy", true},
		{"metrics/gross-margin", "../computations/gross-margin-period.md?v=2", "computations/gross-margin-period", true},
		{"root", "tables/orders.md", "tables/orders", true},
		{"a/b/c", "../../x.md", "x", true},
		{"a/b/c", "../../../x.md", "", false},
		{"root", "../x.md", "", false},
		{"a/b", "/../x.md", "", false},
		{"a/b", "sub/../../x.md", "x", true},
		{"a/b", "<my file.md>", "a/my file", true},
		{"a/b", "my%20file.md", "a/my file", true},
		{"a/b", "events\\_.md", "a/events_", true},
		{"a/b", "https://example.com/x.md", "", false},
		{"a/b", "HTTP://example.com/x.md", "", false},
		{"a/b", "mailto:someone@example.com", "", false},
		{"a/b", "//example.com/x.md", "", false},
		{"a/b", "x.py", "", false},
		{"a/b", "x.md/", "", false},
		{"a/b", "subdir/", "", false},
		{"a/b", "#fragment", "", false},
		{"a/b", "", "", false},
		{"a/b", "index.md", "", false},
		{"a/b", "/index.md", "", false},
		{"a/b", "../log.md", "", false},
		{"a/b", "/.md", "", false},
		{"a/b", "..md", "", false},
		{"a/b", "x/...md", "", false},
		{"a/b", "x/....md", "a/x/...", true},
		{"a/b", "bad%zz.md", "", false},
		{"a/b", "x.MD", "", false},
	}
	for _, tt := range tests {
		got, ok := ResolveConceptTarget(tt.from, tt.target)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ResolveConceptTarget(%q, %q) = %q, %v; want %q, %v", tt.from, tt.target, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLegacyCitations(t *testing.T) {
	body := "# Overview\ntext\n\n" +
		"## citations\n" +
		"- https://a.example\n" +
		"* [B](https://b.example)\n" +
		"  continued\n" +
		"1. third\n" +
		"2) fourth\n" +
		"-\n" +
		"### Sub heading keeps section\n" +
		"+ fifth\n" +
		"```\n- in code\n```\n" +
		"## Next\n" +
		"- not a citation\n" +
		"# Citations\n" +
		"- sixth\n" +
		"### Citations\n" +
		"- seventh (inside level-1 section)\n"
	got := LegacyCitations([]byte(body))
	want := []string{"https://a.example", "[B](https://b.example) continued", "third", "fourth", "fifth", "sixth", "seventh (inside level-1 section)"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LegacyCitations =\n%q\nwant\n%q", got, want)
	}
	if got := LegacyCitations([]byte("### Citations\n- level three is ignored\n")); got != nil {
		t.Fatalf("level-3 heading: %q", got)
	}
	if got := LegacyCitations([]byte("```\n# Citations\n- x\n```\n")); got != nil {
		t.Fatalf("heading in code: %q", got)
	}
}

func TestFootnoteLabels(t *testing.T) {
	body := "Claim.[^ga4-schema] Another[^b] and again[^ga4-schema].\n" +
		"`[^code]` is code.\n" +
		"\\[^escaped]\n" +
		"```\n[^fenced]\n```\n" +
		"[^ga4-schema]: GA4 schema\n" +
		"   [^b]: indented def cites [^c]\n" +
		"[^ bad] [^] [^x y]\n"
	refs, defs := FootnoteLabels([]byte(body))
	if want := []string{"ga4-schema", "b", "c"}; !reflect.DeepEqual(refs, want) {
		t.Errorf("refs = %q, want %q", refs, want)
	}
	if want := []string{"ga4-schema", "b"}; !reflect.DeepEqual(defs, want) {
		t.Errorf("defs = %q, want %q", defs, want)
	}
}
