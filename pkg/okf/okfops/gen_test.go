package okfops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genBundle writes a synthetic v0.2 instant-profile bundle of n concepts of
// about 2 KB each, 100 per directory, with index files, and returns its
// path. Content is deterministic.
func genBundle(tb testing.TB, n int) string {
	tb.Helper()
	return genBundleIn(tb, tb.TempDir(), n)
}

// genBundleIn is genBundle into an existing empty directory.
func genBundleIn(tb testing.TB, dir string, n int) string {
	tb.Helper()
	filler := strings.Repeat("Revenue is recognized when the order is delivered and the return window closes. ", 18)
	if err := os.WriteFile(filepath.Join(dir, "index.md"), []byte("---\nokf_version: \"0.2\"\n---\n# Groups\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	for g := 0; g*100 < n; g++ {
		gdir := filepath.Join(dir, fmt.Sprintf("group%03d", g))
		if err := os.MkdirAll(gdir, 0o755); err != nil {
			tb.Fatal(err)
		}
		var index strings.Builder
		index.WriteString("# Concepts\n\n")
		for i := g * 100; i < min(n, (g+1)*100); i++ {
			name := fmt.Sprintf("concept%05d", i)
			content := fmt.Sprintf(`---
type: Metric
title: Concept %[1]d
description: Synthetic concept number %[1]d for benchmarks.
tags: [bench, group%03[2]d]
status: stable
generated: { by: bench/1.0, at: 2026-06-20T22:53:05Z }
verified:
  - { by: human:bench, at: 2026-06-25T09:00:00Z }
stale_after: 2027-06-30T00:00:00Z
sources:
  - id: src
    resource: https://example.com/src/%[1]d
    last_modified: 2026-05-30T00:00:00Z
---

# Definition

See [the previous concept](/group%03[2]d/concept%05[3]d.md).[^src]

%[4]s

[^src]: Source.
`, i, g, max(0, i-1), filler)
			if err := os.WriteFile(filepath.Join(gdir, name+".md"), []byte(content), 0o644); err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(&index, "* [Concept %d](%s.md) - Synthetic.\n", i, name)
		}
		if err := os.WriteFile(filepath.Join(gdir, "index.md"), []byte(index.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// genV01Bundle writes a synthetic v0.1 bundle of n concepts: a legacy
// timestamp key and a # Citations section with two links each.
func genV01Bundle(tb testing.TB, dir string, n int) string {
	tb.Helper()
	filler := strings.Repeat("Each row is one event with a user, a session and a timestamp. ", 16)
	os.WriteFile(filepath.Join(dir, "index.md"), []byte("# Groups\n"), 0o644)
	for g := 0; g*100 < n; g++ {
		gdir := filepath.Join(dir, fmt.Sprintf("group%03d", g))
		if err := os.MkdirAll(gdir, 0o755); err != nil {
			tb.Fatal(err)
		}
		for i := g * 100; i < min(n, (g+1)*100); i++ {
			content := fmt.Sprintf(`---
type: BigQuery Table
title: Table %[1]d
description: Synthetic legacy table %[1]d.
tags:
- bench
- legacy
timestamp: '2026-05-28T22:53:05+00:00'
---

# Overview
%[2]s

# Citations
- [Schema reference %[1]d](https://example.com/schema/%[1]d)
- https://example.com/queries/%[1]d
`, i, filler)
			if err := os.WriteFile(filepath.Join(gdir, fmt.Sprintf("table%05d.md", i)), []byte(content), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir
}
