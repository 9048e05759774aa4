package bundle

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// MaxConceptIDBytes bounds a concept id.
const MaxConceptIDBytes = 512

// Reserved file names (spec §3.1); they can never be concepts.
var reserved = map[string]bool{"index": true, "log": true}

// ConceptPath validates a concept id and returns its file path (id + ".md").
// An id is a '/'-separated, bundle-relative path without the .md suffix;
// each segment is 1–200 bytes of letters, digits, marks, and "-_.~+@ ",
// does not start with '.' or end with a space, and the last segment is not
// a reserved name. Ids therefore cannot escape the root, reach .okf/ or
// any hidden file, or name index.md or log.md.
func ConceptPath(id string) (string, error) {
	if reason := checkID(id); reason != "" {
		return "", domainerr.New(domainerr.InvalidArgument, "concept_id is invalid: %s", reason).
			WithDetails(map[string]any{"field": "concept_id", "reason": reason})
	}
	return id + ".md", nil
}

// IDOf returns the concept id for a bundle-relative file path, or "" when
// the file is not a concept (not .md, reserved, or hidden).
func IDOf(rel string) string {
	if !strings.HasSuffix(rel, ".md") {
		return ""
	}
	id := strings.TrimSuffix(rel, ".md")
	if checkID(id) != "" {
		return ""
	}
	return id
}

func checkID(id string) string {
	switch {
	case id == "":
		return "empty"
	case len(id) > MaxConceptIDBytes:
		return "too_long"
	case !utf8.ValidString(id):
		return "not_utf8"
	case strings.HasPrefix(id, "/"):
		return "absolute"
	case strings.HasSuffix(strings.ToLower(id), ".md"):
		return "has_md_suffix"
	}
	segs := strings.Split(id, "/")
	for i, seg := range segs {
		switch {
		case seg == "":
			return "empty_segment"
		case seg == "." || seg == "..":
			return "dot_segment"
		case strings.HasPrefix(seg, "."):
			return "hidden_segment"
		case len(seg) > 200:
			return "segment_too_long"
		case strings.HasSuffix(seg, " ") || strings.HasPrefix(seg, " "):
			return "edge_space"
		}
		for _, r := range seg {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || strings.ContainsRune("-_.~+@ ", r)) {
				return "bad_character"
			}
		}
		if i == len(segs)-1 && reserved[strings.ToLower(seg)] {
			return "reserved_name"
		}
	}
	return ""
}
