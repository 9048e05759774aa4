package plan

import "github.com/notebridge/notebridge/pkg/internal/textdiff"

// MaxDiffBytes bounds one file's diff text in a preview.
const MaxDiffBytes = 64 << 10

// Diff renders a unified diff (3 lines of context) from before to after,
// labelled with path. nil before or after means the file is absent. A diff
// longer than MaxDiffBytes stops at a whole line and ends with a
// "... diff truncated" line.
func Diff(path string, before, after []byte) string {
	from, to := "a/"+path, "b/"+path
	if before == nil {
		from = "/dev/null"
	}
	if after == nil {
		to = "/dev/null"
	}
	d, cut := textdiff.Unified(from, to, textdiff.Lines(string(before)), textdiff.Lines(string(after)), MaxDiffBytes)
	if cut > 0 {
		d += "... diff truncated\n"
	}
	return d
}
