package edits

import "github.com/notebridge/notebridge/pkg/internal/textdiff"

// Diff renders a unified diff (3 lines of context) from a to b under the
// given label, at most maxBytes long. Lines that did not fit are counted
// in cut, never shown partly. Equal texts give "" and 0.
func Diff(label, a, b string, maxBytes int) (diff string, cut int) {
	if a == b {
		return "", 0
	}
	return textdiff.Unified("a/"+label, "b/"+label, textdiff.Lines(a), textdiff.Lines(b), maxBytes)
}
