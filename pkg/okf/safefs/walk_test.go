package safefs_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"golang.org/x/sys/unix"
)

// walkAll returns the Rel of every entry Walk visits.
func walkAll(t *testing.T, r *safefs.Root, opt safefs.WalkOptions) ([]string, error) {
	t.Helper()
	var got []string
	err := r.Walk(opt, func(e safefs.Entry) error {
		if e.Stat.Mode&unix.S_IFMT != unix.S_IFREG {
			t.Errorf("Walk passed a non-regular entry %q (mode %o)", e.Rel, e.Stat.Mode)
		}
		got = append(got, e.Rel)
		return nil
	})
	return got, err
}

func TestWalkOrderAndHidden(t *testing.T) {
	f := newFixture(t)
	// Created deliberately out of order so directory order cannot pass
	// for sorted order by accident.
	files := map[string]string{
		"z.txt":        "z",
		"sub/.dot.md":  "dot",
		"sub/b.md":     "sb",
		"sub/a.md":     "sa",
		"b.md":         "b",
		".okf/journal": "j",
		".okf/x/y.md":  "y",
		"a/z/y.md":     "y",
		"a/x.md":       "x",
		"a-b.md":       "ab",
		"a.md":         "a",
		".hidden.md":   "h",
		"B.md":         "B",
	}
	for _, rel := range []string{"z.txt", "sub/.dot.md", "sub/b.md", "b.md", ".okf/journal", ".okf/x/y.md", "a/z/y.md", "sub/a.md", "a/x.md", "a-b.md", "a.md", ".hidden.md", "B.md"} {
		f.write("bundle/"+rel, files[rel])
	}
	f.mkdir("bundle/empty/deeper")
	f.mkdir("bundle/.hiddendir")
	r := f.open("bundle")

	tests := []struct {
		name string
		opt  safefs.WalkOptions
		want []string
	}{
		{
			// Each directory's entries in byte order, depth first: "a"
			// sorts before "a-b.md" although "a-b.md" < "a/x.md" as a
			// whole path (callers needing path order sort themselves).
			name: "skip hidden",
			opt:  safefs.WalkOptions{SkipHidden: true},
			want: []string{"B.md", "a/x.md", "a/z/y.md", "a-b.md", "a.md", "b.md", "sub/a.md", "sub/b.md", "z.txt"},
		},
		{
			name: "all",
			opt:  safefs.WalkOptions{},
			want: []string{".hidden.md", ".okf/journal", ".okf/x/y.md", "B.md", "a/x.md", "a/z/y.md", "a-b.md", "a.md", "b.md", "sub/.dot.md", "sub/a.md", "sub/b.md", "z.txt"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 3 { // deterministic across runs
				got, err := walkAll(t, r, tc.opt)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Fatalf("run %d: Walk = %v\nwant %v", i, got, tc.want)
				}
			}
		})
	}

	// Entry.Stat is the file's own lstat.
	err := r.Walk(safefs.WalkOptions{SkipHidden: true}, func(e safefs.Entry) error {
		if want := int64(len(files[e.Rel])); e.Stat.Size != want {
			t.Errorf("%s: size %d, want %d", e.Rel, e.Stat.Size, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWalkHiddenSpecialSkipped(t *testing.T) {
	// With SkipHidden, a symlink or FIFO under a hidden name (e.g. inside
	// .okf) is never met; without it, it is refused.
	f := newFixture(t)
	f.write("bundle/a.md", "a")
	f.mkdir("bundle/.okf")
	f.symlink("/", "bundle/.okf/rootlink")
	f.symlink("a.md", "bundle/.link.md")
	r := f.open("bundle")
	got, err := walkAll(t, r, safefs.WalkOptions{SkipHidden: true})
	if err != nil || strings.Join(got, ",") != "a.md" {
		t.Errorf("Walk(SkipHidden) = %v, %v; want [a.md]", got, err)
	}
	_, err = walkAll(t, r, safefs.WalkOptions{})
	f.want("Walk(all)", err, safefs.CodeSymlink)
}

func TestWalkEmpty(t *testing.T) {
	f := newFixture(t)
	f.mkdir("bundle/d1/d2")
	r := f.open("bundle")
	got, err := walkAll(t, r, safefs.WalkOptions{})
	if err != nil || len(got) != 0 {
		t.Errorf("Walk(empty) = %v, %v", got, err)
	}
}

// nest creates n nested directories d1/d2/.../dn below bundle with f.md in
// the deepest and returns the deepest directory's rel.
func nest(f *fixture, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("d%d", i+1)
	}
	rel := strings.Join(parts, "/")
	f.write("bundle/"+rel+"/f.md", "f")
	return rel
}

func TestWalkMaxDepth(t *testing.T) {
	tests := []struct {
		name     string
		dirs     int // directory nesting below the root
		maxDepth int
		tooDeep  string // Rel of the refused directory, "" = ok
	}{
		{"at limit", 3, 3, ""},
		{"below limit", 2, 3, ""},
		{"one too deep", 3, 2, "d1/d2/d3"},
		{"limit 1", 2, 1, "d1/d2"},
		{"limit 1, ok", 1, 1, ""},
		{"default 64 ok", 64, 0, ""},
		{"default 64 exceeded", 65, 0, strings.TrimSuffix(strings.Repeat("dX/", 65), "/")},
		{"negative means default", 10, -1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			deepest := nest(f, tc.dirs)
			f.write("bundle/top.md", "t")
			r := f.open("bundle")
			got, err := walkAll(t, r, safefs.WalkOptions{MaxDepth: tc.maxDepth})
			if tc.tooDeep == "" {
				if err != nil {
					t.Fatalf("Walk = %v", err)
				}
				want := deepest + "/f.md,top.md"
				if strings.Join(got, ",") != want {
					t.Errorf("Walk = %v, want %s", got, want)
				}
				return
			}
			if !errors.Is(err, safefs.ErrTooDeep) {
				t.Fatalf("Walk = %v, want an error wrapping ErrTooDeep", err)
			}
			f.want("Walk too deep", err, safefs.CodeTooLarge)
			var pe *safefs.PathError
			if errors.As(err, &pe) {
				wantRel := tc.tooDeep
				if strings.HasPrefix(wantRel, "dX") { // generated names
					parts := strings.Split(deepest, "/")
					wantRel = strings.Join(parts[:len(strings.Split(wantRel, "/"))], "/")
				}
				if pe.Rel != wantRel {
					t.Errorf("too-deep Rel = %q, want %q", pe.Rel, wantRel)
				}
			}
			for _, g := range got {
				if g == deepest+"/f.md" {
					t.Errorf("Walk visited %s beyond the depth limit", g)
				}
			}
		})
	}
}

func TestWalkStop(t *testing.T) {
	f := newFixture(t)
	for _, rel := range []string{"a.md", "b.md", "c/d.md", "e.md"} {
		f.write("bundle/"+rel, rel)
	}
	r := f.open("bundle")
	sentinel := errors.New("boom")
	tests := []struct {
		name    string
		stopAt  int
		ret     error
		wantErr error
		visits  int
	}{
		{"ErrStop first", 1, safefs.ErrStop, nil, 1},
		{"ErrStop in subdir", 3, safefs.ErrStop, nil, 3},
		{"wrapped ErrStop", 2, fmt.Errorf("done: %w", safefs.ErrStop), nil, 2},
		{"other error", 2, sentinel, sentinel, 2},
		{"never stops", 99, nil, nil, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := r.Walk(safefs.WalkOptions{}, func(e safefs.Entry) error {
				n++
				if n == tc.stopAt {
					return tc.ret
				}
				return nil
			})
			if tc.wantErr == nil && err != nil {
				t.Errorf("Walk = %v, want nil", err)
			}
			if tc.wantErr != nil && err != tc.wantErr {
				t.Errorf("Walk = %v, want the callback's error unchanged", err)
			}
			if n != tc.visits {
				t.Errorf("visits = %d, want %d", n, tc.visits)
			}
		})
	}
	// The root descriptor is still usable after an early stop.
	if b, err := r.ReadFile("e.md", 100); err != nil || string(b) != "e.md" {
		t.Errorf("ReadFile after stop = %q, %v", b, err)
	}
}

func TestWalkVanishedEntry(t *testing.T) {
	// An entry removed during the walk is skipped, not an error.
	f := newFixture(t)
	for _, rel := range []string{"a.md", "b.md", "c.md"} {
		f.write("bundle/"+rel, rel)
	}
	r := f.open("bundle")
	var got []string
	err := r.Walk(safefs.WalkOptions{}, func(e safefs.Entry) error {
		got = append(got, e.Rel)
		if e.Rel == "a.md" {
			if err := os.Remove(f.path("bundle/b.md")); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	if err != nil || strings.Join(got, ",") != "a.md,c.md" {
		t.Errorf("Walk = %v, %v; want [a.md c.md]", got, err)
	}
}
