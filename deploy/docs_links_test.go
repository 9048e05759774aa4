package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinksResolve: every relative Markdown link in README.md,
// CHANGELOG.md and docs/*.md points at a file that exists and, when it
// has a #anchor into a Markdown file, at a heading of that file whose
// GitHub-style slug is the anchor. Moving a section out of the README
// cannot leave a newcomer on a dead link.
func TestDocsLinksResolve(t *testing.T) {
	files := []string{"../README.md", "../CHANGELOG.md"}
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	if len(docs) < 5 {
		t.Fatalf("found only %d pages in docs/: the glob is broken", len(docs))
	}
	anchors := map[string]map[string]bool{} // cleaned path → its anchors
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := markdownAnchors(string(b))
		anchors[path] = a
		return a, nil
	}
	checked := 0
	for _, file := range files {
		src := read(t, file)
		for _, l := range markdownLinks(src) {
			target, anchor, _ := strings.Cut(l.target, "#")
			if isExternal(target) {
				continue
			}
			checked++
			name := strings.TrimPrefix(file, "../")
			path := file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), filepath.FromSlash(target))
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s:%d: link %q: %s does not exist", name, l.line, l.target, strings.TrimPrefix(filepath.ToSlash(path), "../"))
				continue
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if fi.IsDir() {
				t.Errorf("%s:%d: link %q: %s is a directory, it has no anchor", name, l.line, l.target, path)
				continue
			}
			a, err := anchorsOf(filepath.Clean(path))
			if err != nil {
				t.Fatal(err)
			}
			if !a[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading whose slug is %q", name, l.line, l.target, strings.TrimPrefix(filepath.ToSlash(path), "../"), anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d relative links: the scan is broken", checked)
	}
}

func isExternal(target string) bool {
	return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(target)
}

type mdLink struct {
	target string
	line   int
}

var (
	fenceRe   = regexp.MustCompile("^\\s*(```|~~~)")
	codeRe    = regexp.MustCompile("`+[^`]*`+")
	inlineRe  = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRe  = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	headingRe = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlIDRe  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// proseLines calls fn with each line of src outside fenced code blocks
// and its 1-based number.
func proseLines(src string, fn func(line string, n int)) {
	inFence := false
	for i, line := range strings.Split(src, "\n") {
		if fenceRe.MatchString(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			fn(line, i+1)
		}
	}
}

// markdownLinks returns the link targets outside code blocks and code
// spans, with their line numbers.
func markdownLinks(src string) []mdLink {
	var out []mdLink
	proseLines(src, func(line string, n int) {
		line = codeRe.ReplaceAllString(line, "")
		for _, m := range inlineRe.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLink{m[1], n})
		}
		if m := refDefRe.FindStringSubmatch(line); m != nil {
			out = append(out, mdLink{m[1], n})
		}
	})
	return out
}

// markdownAnchors returns the anchors GitHub gives a Markdown file's
// headings (a repeated slug gets -1, -2, …) and its explicit <a name|id>.
func markdownAnchors(src string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	proseLines(src, func(line string, _ int) {
		for _, m := range htmlIDRe.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRe.FindStringSubmatch(line)
		if m == nil {
			return
		}
		s := slug(m[2])
		if n := count[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	})
	return out
}

var (
	mdLinkTextRe = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRe    = regexp.MustCompile(`<[^>]+>`)
)

// slug is GitHub's heading anchor: the heading's text (links by their
// text, HTML tags dropped), lower case, every character but letters,
// digits, '-', '_' and spaces removed, spaces turned into '-'.
func slug(heading string) string {
	heading = mdLinkTextRe.ReplaceAllString(heading, "$1")
	heading = htmlTagRe.ReplaceAllString(heading, "")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Quickstart: ChatGPT and Claude connectors (OAuth)": "quickstart-chatgpt-and-claude-connectors-oauth",
		"Settings (`.env` or the environment)":              "settings-env-or-the-environment",
		"Joplin ↔ OKF (`export_notebook_to_okf`)":           "joplin--okf-export_notebook_to_okf",
		"Search by meaning (issue 26)":                      "search-by-meaning-issue-26",
		"`notebridge setup`":                                "notebridge-setup",
		"See [the docs](docs/x.md) **now**":                 "see-the-docs-now",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	a := markdownAnchors("# A\n## A\n```\n# not a heading\n```\n## A\n")
	for _, want := range []string{"a", "a-1", "a-2"} {
		if !a[want] {
			t.Errorf("anchors %v lack %q", a, want)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a code block counted as a heading")
	}
}
