package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMECommandsExist: every `notebridge …` command the README or a
// page of docs/ shows a person (in a code span or block) is one the binary
// knows: its -h succeeds. A renamed or imagined command fails here, not on
// a newcomer's terminal. docs/benchmarks.md is left out: it is a log of
// measurements, whose quoted output is no command to type.
func TestREADMECommandsExist(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = slices.DeleteFunc(pages, func(p string) bool { return filepath.Base(p) == "benchmarks.md" })
	if len(pages) < 5 {
		t.Fatalf("found only %d pages in docs/: the glob is broken", len(pages))
	}
	pages = append([]string{"../../README.md"}, pages...)
	var code []string
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```|`([^`\n]+)`").FindAllStringSubmatch(string(text), -1) {
			code = append(code, m[1]+m[2])
		}
	}
	withSub := map[string]bool{"secrets": true, "mcp": true, "oauth": true, "joplin": true}
	seen := map[string]bool{}
	cmd := regexp.MustCompile(`(?:^|[\s/(])notebridge ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?`)
	for _, block := range code {
		for _, m := range cmd.FindAllStringSubmatch(block, -1) {
			args := []string{m[1]}
			if withSub[m[1]] && m[2] != "" {
				args = append(args, m[2])
			}
			key := strings.Join(args, " ")
			if seen[key] {
				continue
			}
			seen[key] = true
			// A command that takes an ID first (oauth revoke ID) gets one.
			help := func(extra ...string) int {
				a := append(append(slices.Clone(args), extra...), "-h")
				return run(context.Background(), a, strings.NewReader(""), io.Discard, io.Discard)
			}
			if code := help(); code != 0 && help("ID") != 0 {
				t.Errorf("the README or docs/ show `notebridge %s`, whose -h exits %d", key, code)
			}
		}
	}
	// The README's first-time steps and docs/commands.md, which lists every
	// command, must be among what was scanned.
	for _, want := range []string{"serve", "secrets show", "joplin forget", "mcp stdio", "oauth revoke", "setup", "doctor", "openapi", "journal", "activity"} {
		if !slices.Contains(keys(seen), want) {
			t.Errorf("found no `notebridge %s` in the README and docs/: the scan is broken (found %v)", want, keys(seen))
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
