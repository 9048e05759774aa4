package joplinops

import (
	"fmt"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin/edits"
)

// MaxInlineBody bounds the body get_note returns unless asked for all of
// it: a longer body is cut at a line break and comes with its outline.
const MaxInlineBody = 20_000

// maxOutline bounds the headings an outline lists.
const maxOutline = 2000

// OutlineHeading is one heading of a note's outline.
type OutlineHeading struct {
	Level int    `json:"level" schema:"min=1,max=6"`
	Text  string `json:"text" schema:"max=10000"`
	Line  int    `json:"line" jsonschema:"1-based line number." schema:"min=1,max=100000000"`
	Bytes int    `json:"bytes" jsonschema:"Size of the section, nested sections included." schema:"min=0,max=100000000"`
}

// bodyView says which part of a body an answer holds.
type bodyView struct {
	// BodyBytes is the size of the whole body.
	BodyBytes int              `json:"body_bytes,omitempty" schema:"min=0,max=100000000"`
	Outline   []OutlineHeading `json:"outline,omitempty" schema:"max=2000"`
	// BodyTruncated is set when body holds only the first part of the body.
	BodyTruncated bool `json:"body_truncated,omitempty"`
	// More says how to read the rest when the body is not all there.
	More string `json:"more,omitempty" schema:"max=500"`
}

// outline lists body's headings, at most maxOutline of them.
func outline(body string) []OutlineHeading {
	entries := edits.Outline(body)
	out := make([]OutlineHeading, 0, min(len(entries), maxOutline))
	for _, e := range entries[:min(len(entries), maxOutline)] {
		out = append(out, OutlineHeading{Level: e.Level, Text: e.Text, Line: e.Line, Bytes: e.Bytes})
	}
	return out
}

const moreHint = "get_note with view \"section\" and a heading from outline reads one section; view \"full\" reads the whole body."

// viewBody returns the part of body view asks for: all of it ("full"),
// refused beyond maxWhole bytes; none of it with its outline ("outline");
// one section ("section"); or by default all of it. Every answer but
// "full" holds at most MaxInlineBody bytes: a longer body or section is
// cut at a line break and comes with the note's outline and a hint.
func viewBody(body, view, heading string, maxWhole int) (*string, bodyView, error) {
	if heading != "" && view != "section" {
		return nil, bodyView{}, domainerr.New(domainerr.InvalidArgument, "heading is only used with view \"section\"")
	}
	v := bodyView{BodyBytes: len(body)}
	switch view {
	case "full":
		if len(body) > maxWhole {
			return nil, bodyView{}, wholeTooLarge(len(body), maxWhole)
		}
		return &body, v, nil
	case "outline":
		v.Outline, v.More = outline(body), moreHint
		return nil, v, nil
	case "section":
		if heading == "" {
			return nil, bodyView{}, domainerr.New(domainerr.InvalidArgument, "view \"section\" needs a heading")
		}
		sec, err := edits.Section(body, heading)
		if err != nil {
			return nil, bodyView{}, domainerr.New(domainerr.InvalidArgument, "section: %s", err.Error()).
				WithDetails(map[string]any{"hint": "get_note with view \"outline\" lists the headings"})
		}
		cut, truncated := cutText(sec, MaxInlineBody)
		if !truncated {
			return &sec, v, nil
		}
		v.BodyTruncated, v.Outline = true, outline(body)
		v.More = fmt.Sprintf("The section is %d bytes; this is its first %d. Read a section nested in it (outline lists them) for the rest.", len(sec), len(cut))
		return &cut, v, nil
	}
	cut, truncated := cutText(body, MaxInlineBody)
	if !truncated {
		return &body, bodyView{}, nil
	}
	v.BodyTruncated, v.Outline = true, outline(body)
	v.More = fmt.Sprintf("The body is %d bytes; this is its first %d. %s", len(body), len(cut), moreHint)
	return &cut, v, nil
}

// wholeTooLarge refuses a whole body beyond the ceiling, saying how to
// read it in parts.
func wholeTooLarge(size, max int) error {
	return domainerr.New(domainerr.ResponseTooLarge,
		"the body is %d bytes, more than the %d bytes a whole body may have; read it in parts: get_note with view \"outline\", then view \"section\" with a heading", size, max).
		WithDetails(map[string]any{"body_bytes": size, "max_bytes": max, "hint": "get_note with view \"outline\" lists the headings; view \"section\" reads one"})
}
