package textdiff

import (
	"strings"
	"testing"
)

// TestUnifiedHunks: headers, hunk ranges (a hunk adding to nothing names
// the line before it), a missing final newline, and a cut that keeps whole
// lines and counts the rest.
func TestUnifiedHunks(t *testing.T) {
	d, cut := Unified("a/x", "b/x", Lines("1\n2\n3\n"), Lines("1\n2\nthree\n4"), 1000)
	want := "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n 1\n 2\n-3\n+three\n+4\n\\ No newline at end of file\n"
	if d != want || cut != 0 {
		t.Fatalf("diff:\n%s\ncut %d", d, cut)
	}
	d, _ = Unified("/dev/null", "b/x", nil, Lines("new\n"), 1000)
	if !strings.Contains(d, "@@ -0,0 +1,1 @@\n+new\n") {
		t.Fatalf("creation:\n%s", d)
	}
	d, cut = Unified("a/x", "b/x", Lines("a\nb\nc\n"), Lines("A\nB\nC\n"), 40)
	if len(d) > 40 || cut == 0 || strings.HasSuffix(d, "A") {
		t.Fatalf("cut diff %q, cut %d", d, cut)
	}
}

// FuzzUnified: a diff within its bound accounts for every added and
// removed line, shown or counted in cut.
func FuzzUnified(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", 1000)
	f.Add("x", "", 40)
	f.Add("1\r\n2\r\n", "1\r\n3\r\n", 10)
	f.Fuzz(func(t *testing.T, a, b string, maxBytes int) {
		if maxBytes < 0 {
			maxBytes = -maxBytes
		}
		maxBytes = 1 + maxBytes%4096
		d, cut := Unified("a/n", "b/n", Lines(a), Lines(b), maxBytes)
		if len(d) > maxBytes {
			t.Fatalf("%d bytes over the bound %d", len(d), maxBytes)
		}
		ops := align(Lines(a), Lines(b))
		shown := 0
		lines := strings.SplitAfter(d, "\n")
		for _, l := range lines[min(2, len(lines)):] {
			if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
				shown++
			}
		}
		if shown+cut != countChanged(ops) {
			t.Fatalf("shown %d + cut %d != changed %d", shown, cut, countChanged(ops))
		}
	})
}
