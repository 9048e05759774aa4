package joplinops

import (
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

var folder = cases.Fold()

// NormalizeTitle returns the natural-identity form of a title: NFC, trimmed,
// internal whitespace collapsed to one space, and case folded.
func NormalizeTitle(s string) string {
	s = norm.NFC.String(s)
	s = strings.Join(strings.Fields(s), " ")
	return norm.NFC.String(folder.String(s))
}

// match is one existing object sharing a create's natural identity.
type match struct {
	ID      string `json:"id"`
	Trashed bool   `json:"trashed"`
}

// alreadyExists builds the *_ALREADY_EXISTS error for a create that found
// matches: every matching id with its trashed state, the update tool and,
// when any match is trashed, the restore tool.
func alreadyExists(code domainerr.Code, kind, updateTool, restoreTool string, matches []match) *domainerr.Error {
	details := map[string]any{"matches": matches, "update_tool": updateTool}
	anyTrashed := false
	for _, m := range matches {
		anyTrashed = anyTrashed || m.Trashed
	}
	msg := "a " + kind + " with the same identity already exists; update it with " + updateTool
	if anyTrashed && restoreTool != "" {
		details["restore_tool"] = restoreTool
		msg += ", or restore the trashed one with " + restoreTool
	}
	return domainerr.New(code, "%s", msg).WithDetails(details)
}
