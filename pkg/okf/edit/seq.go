package edit

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Item is one element of a rewritten top-level sequence. Keep >= 0 keeps
// original item number Keep; otherwise Render is a new item's one-line
// flow text (a scalar or "{ ... }").
type Item struct {
	Keep   int
	Render string
}

// NewItem returns an Item holding rendered text.
func NewItem(render string) Item { return Item{Keep: -1, Render: render} }

// KeepItem returns an Item keeping original item i.
func KeepItem(i int) Item { return Item{Keep: i} }

// SetSequence rewrites top-level key as a sequence of items. When the
// current value is a block sequence, kept items keep their exact bytes
// (comments included) and new ones are written at the same indentation.
// Otherwise (absent, flow sequence, a bare mapping) the whole value is
// rewritten as a block sequence and a kept item i is rendered by
// renderOriginal(i). An empty list removes the key.
func (e *Editor) SetSequence(key string, items []Item, renderOriginal func(i int) string) error {
	if len(items) == 0 {
		return e.DeleteKey(key)
	}
	start, end, k, v, ok, err := e.entry(key)
	if err != nil {
		return err
	}
	if !ok || v.Kind != yaml.SequenceNode || v.Style&yaml.FlowStyle != 0 {
		var b strings.Builder
		b.WriteString("\n")
		for _, it := range items {
			text := it.Render
			if it.Keep >= 0 {
				text = renderOriginal(it.Keep)
			}
			b.WriteString("  - " + text + "\n")
		}
		return e.SetKey(key, b.String())
	}
	spans, indent, err := e.itemSpans(v, end)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.Write(e.src[start:e.lineStart(k.Line+1)]) // the key line, comment and all
	if v.Line == k.Line {
		return refuse("ambiguous_yaml", "sequence %q starts on its key's line", key)
	}
	b.Write(e.src[e.lineStart(k.Line+1):spans[0][0]]) // comments before the first item
	for _, it := range items {
		if it.Keep >= 0 {
			if it.Keep >= len(spans) {
				return refuse("internal", "kept item out of range")
			}
			b.Write(e.src[spans[it.Keep][0]:spans[it.Keep][1]])
			continue
		}
		b.WriteString(indent + "- " + it.Render + "\n")
	}
	e.add(start, end, b.String())
	return nil
}

// itemSpans returns each block-sequence item's byte span, from its dash
// line to the next item's dash line (the last one to entryEnd), and the
// dash indentation.
func (e *Editor) itemSpans(v *yaml.Node, entryEnd int) ([][2]int, string, error) {
	var spans [][2]int
	indent := ""
	for i, c := range v.Content {
		ls := e.lineStart(c.Line)
		line := string(e.src[ls:min(e.lineStart(c.Line+1), len(e.src))])
		trimmed := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(trimmed, "- ") && strings.TrimRight(trimmed, "\n") != "-" {
			return nil, "", refuse("ambiguous_yaml", "a sequence item does not start its own line")
		}
		this := line[:len(line)-len(trimmed)]
		if i == 0 {
			indent = this
		} else if this != indent {
			return nil, "", refuse("ambiguous_yaml", "sequence items are not evenly indented")
		}
		if i > 0 && spans[i-1][0] == ls {
			return nil, "", refuse("ambiguous_yaml", "two sequence items share a line")
		}
		spans = append(spans, [2]int{ls, 0})
	}
	for i := range spans {
		if i+1 < len(spans) {
			spans[i][1] = spans[i+1][0]
		} else {
			spans[i][1] = entryEnd
		}
	}
	return spans, indent, nil
}
