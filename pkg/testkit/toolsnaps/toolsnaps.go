// Package toolsnaps keeps one snapshot file per tool and surface, so that a
// review sees exactly which tool's contract moved: a drifted snapshot fails
// with a semantic diff (the JSON paths that changed, old and new), a
// missing one fails, and so does a file no tool stands for any more. With
// -update, the files are rewritten and the stale ones removed.
package toolsnaps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Snap is one snapshot: Name is its file's name without .json (a tool's
// name, or a name starting with _ for what belongs to no one tool), JSON
// the value it holds.
type Snap struct {
	Name string
	JSON json.RawMessage
}

// maxDiffLines bounds the lines of one drift report.
const maxDiffLines = 40

// Check holds snaps against the files of dir, each <Name>.json holding its
// value indented by two spaces. command is the command that accepts a
// deliberate change (the same test with -update); with update set, Check
// rewrites dir to hold exactly snaps instead.
func Check(t testing.TB, dir string, snaps []Snap, update bool, command string) {
	t.Helper()
	want := make(map[string]bool, len(snaps))
	for _, s := range snaps {
		if want[s.Name] {
			t.Fatalf("%s: two snapshots named %s", dir, s.Name)
		}
		want[s.Name] = true
	}
	if update {
		write(t, dir, snaps, want)
		return
	}
	for _, s := range snaps {
		got, err := pretty(s.JSON)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		path := filepath.Join(dir, s.Name+".json")
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("missing snapshot %s: run `%s`", path, command)
			continue
		}
		if !bytes.Equal(old, got) {
			t.Errorf("%s drifted; review the change and run `%s`:\n%s", path, command, Diff(old, got))
		}
	}
	for _, name := range files(t, dir) {
		if !want[name] {
			t.Errorf("%s: no tool stands for this snapshot any more; run `%s`", filepath.Join(dir, name+".json"), command)
		}
	}
}

func write(t testing.TB, dir string, snaps []Snap, want map[string]bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range files(t, dir) {
		if !want[name] {
			if err := os.Remove(filepath.Join(dir, name+".json")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range snaps {
		b, err := pretty(s.JSON)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// files lists the snapshot names in dir (none when dir is missing).
func files(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() {
			names = append(names, name)
		}
	}
	return names
}

// pretty indents raw by two spaces, keeping its keys in their order, and
// ends it with a newline.
func pretty(raw json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("snapshot is not JSON: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// Diff describes how got differs from old as JSON values: one line per
// path that was removed (-), added (+) or changed (~), at most
// maxDiffLines. Two encodings of the same value differ in key order or
// layout only, and it says so.
func Diff(old, got []byte) string {
	var a, b any
	if err := unmarshal(old, &a); err != nil {
		return "the snapshot on disk is not JSON: " + err.Error()
	}
	if err := unmarshal(got, &b); err != nil {
		return "the new snapshot is not JSON: " + err.Error()
	}
	var lines []string
	diff("", a, b, &lines)
	if len(lines) == 0 {
		return "  the same JSON value, with its keys in another order or laid out otherwise"
	}
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("  … and %d more", len(lines)-maxDiffLines))
	}
	return strings.Join(lines, "\n")
}

func unmarshal(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func diff(path string, a, b any, lines *[]string) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(av)+len(bv))
			for k := range av {
				keys = append(keys, k)
			}
			for k := range bv {
				if _, ok := av[k]; !ok {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				x, inA := av[k]
				y, inB := bv[k]
				switch {
				case !inB:
					*lines = append(*lines, fmt.Sprintf("  - %s: %s", join(path, k), short(x)))
				case !inA:
					*lines = append(*lines, fmt.Sprintf("  + %s: %s", join(path, k), short(y)))
				default:
					diff(join(path, k), x, y, lines)
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := range max(len(av), len(bv)) {
				p := fmt.Sprintf("%s[%d]", path, i)
				switch {
				case i >= len(bv):
					*lines = append(*lines, fmt.Sprintf("  - %s: %s", p, short(av[i])))
				case i >= len(av):
					*lines = append(*lines, fmt.Sprintf("  + %s: %s", p, short(bv[i])))
				default:
					diff(p, av[i], bv[i], lines)
				}
			}
			return
		}
	}
	if !equal(a, b) {
		*lines = append(*lines, fmt.Sprintf("  ~ %s: %s → %s", orRoot(path), short(a), short(b)))
	}
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(the whole value)"
	}
	return path
}

// short renders v in at most 120 characters.
func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// Names returns the snapshot that holds the order of names, for surfaces
// whose order is part of the contract (tools/list).
func Names(name string, names []string) Snap {
	b, _ := json.Marshal(names)
	return Snap{Name: name, JSON: b}
}
