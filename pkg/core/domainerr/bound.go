package domainerr

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"unicode/utf8"
)

// Truncation markers Bound adds to the details of a shortened error: the
// same words the success bodies use for a cut list ("truncated") and for
// content left out ("omitted").
const (
	// DetailTruncated is true when Bound shortened the details.
	DetailTruncated = "truncated"
	// DetailOmitted maps each shortened details list to how many of its
	// items were left out.
	DetailOmitted = "omitted"
)

// Bound returns e when its JSON encoding is at most maxBytes long, and
// otherwise a copy whose encoding is: code and retryable are kept; every
// top-level details list keeps as many leading items as fit (all lists cut
// to the same length), and details gain "truncated": true and "omitted":
// {list: count left out}. When even empty lists do not fit, the details are
// reduced to {"truncated": true}, and the message is shortened as a last
// resort. e itself is never changed.
func (e *Error) Bound(maxBytes int) *Error {
	if e == nil || encodedLen(e) <= maxBytes {
		return e
	}
	out := &Error{Code: e.Code, Message: e.Message, Retryable: e.Retryable}
	if details, lists, ok := genericDetails(e.Details); ok && len(lists) > 0 {
		fit := func(keep int) bool {
			out.Details = cutLists(details, lists, keep)
			return encodedLen(out) <= maxBytes
		}
		longest := 0
		for _, k := range lists {
			longest = max(longest, len(details[k].([]any)))
		}
		// The largest keep that fits: fit is monotone in keep.
		keep := sort.Search(longest+1, func(n int) bool { return !fit(n) }) - 1
		if keep >= 0 && fit(keep) {
			return out
		}
	}
	out.Details = map[string]any{DetailTruncated: true}
	for encodedLen(out) > maxBytes && out.Message != "" {
		out.Message = shorten(out.Message, len(out.Message)-(encodedLen(out)-maxBytes)-len("…"))
	}
	return out
}

// genericDetails re-decodes details into plain JSON values so lists of any
// element type can be cut, and names its top-level lists in sorted order.
func genericDetails(details map[string]any) (map[string]any, []string, bool) {
	b, err := json.Marshal(details)
	if err != nil {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic map[string]any
	if dec.Decode(&generic) != nil {
		return nil, nil, false
	}
	var lists []string
	for k, v := range generic {
		if _, ok := v.([]any); ok && k != DetailOmitted && k != DetailTruncated {
			lists = append(lists, k)
		}
	}
	slices.Sort(lists)
	return generic, lists, true
}

// cutLists returns a copy of details with every list cut to keep items and
// the truncation markers set.
func cutLists(details map[string]any, lists []string, keep int) map[string]any {
	out := make(map[string]any, len(details)+2)
	for k, v := range details {
		out[k] = v
	}
	omitted := map[string]int{}
	for _, k := range lists {
		if l := details[k].([]any); len(l) > keep {
			out[k] = l[:keep]
			omitted[k] = len(l) - keep
		}
	}
	out[DetailTruncated] = true
	out[DetailOmitted] = omitted
	return out
}

// shorten cuts s to at most n bytes on a rune boundary and marks the cut.
func shorten(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func encodedLen(e *Error) int {
	b, err := json.Marshal(e)
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return len(b)
}
