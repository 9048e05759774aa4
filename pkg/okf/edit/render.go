package edit

import (
	"fmt"
	"regexp"
	"strings"
)

var plainSafe = regexp.MustCompile(`^[A-Za-z0-9_/][A-Za-z0-9 _./:@+\-]*$`)

// reservedPlain are plain scalars YAML would not read back as strings.
var reservedPlain = regexp.MustCompile(`^(?i:null|~|true|false|yes|no|on|off|y|n|[-+]?(\.inf|\.nan)|[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|0[xob][0-9a-f_]+)$`)

// Scalar renders s as a YAML scalar that reads back as exactly s: plain
// when that is unambiguous, otherwise double-quoted with JSON escapes.
// Dates and instants stay plain, matching the spec's examples.
func Scalar(s string) string {
	if s != "" && plainSafe.MatchString(s) && !reservedPlain.MatchString(s) &&
		!strings.Contains(s, ": ") && !strings.HasSuffix(s, ":") && !strings.HasSuffix(s, " ") {
		return s
	}
	return quote(s)
}

// quote renders a YAML double-quoted scalar, escaping every character
// YAML does not allow literally (C0 and C1 controls, DEL, BOM, U+FFFE/F).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Flow renders ordered key/value pairs as a one-line flow mapping
// "{ k: v, ... }", skipping empty values. Values are rendered with Scalar
// unless they already start with '[' or '{' (nested flow collections).
func Flow(pairs ...string) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		v := pairs[i+1]
		if v == "" {
			continue
		}
		if !strings.HasPrefix(v, "[") && !strings.HasPrefix(v, "{") {
			v = Scalar(v)
		}
		parts = append(parts, pairs[i]+": "+v)
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// FlowRendered is Flow for values that are already rendered (numbers,
// booleans, nested collections); empty values are skipped.
func FlowRendered(pairs ...string) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			parts = append(parts, pairs[i]+": "+pairs[i+1])
		}
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// FlowList renders strings as a one-line flow sequence.
func FlowList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = Scalar(s)
	}
	return "[" + strings.Join(out, ", ") + "]"
}
