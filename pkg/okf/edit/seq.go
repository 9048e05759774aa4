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
		if ok {
			if err := e.losslessRewrite(start, end, k, v, items, renderOriginal); err != nil {
				return err
			}
		}
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

// losslessRewrite checks that rewriting an existing flow sequence or bare
// mapping (bytes [start, end)) as a block list loses nothing: the entry
// holds no comment, and every kept item, as renderOriginal renders it,
// reads back as the same YAML value (unknown fields included).
func (e *Editor) losslessRewrite(start, end int, k, v *yaml.Node, items []Item, renderOriginal func(i int) string) error {
	if e.hasComment(start, end, k, v) {
		return refuse("lossy_rewrite", "rewriting %q as a list would drop its comments", k.Value)
	}
	var originals []*yaml.Node
	switch v.Kind {
	case yaml.SequenceNode:
		originals = v.Content
	case yaml.MappingNode:
		originals = []*yaml.Node{v}
	}
	for _, it := range items {
		if it.Keep < 0 {
			continue
		}
		var n yaml.Node
		if it.Keep >= len(originals) || renderOriginal == nil ||
			yaml.Unmarshal([]byte(renderOriginal(it.Keep)), &n) != nil || len(n.Content) != 1 ||
			!sameValue(originals[it.Keep], n.Content[0]) {
			return refuse("lossy_rewrite", "an entry of %q cannot be rewritten as a list item without losing data", k.Value)
		}
	}
	return nil
}

// hasComment reports whether bytes [start, end) hold a YAML comment: a
// '#' at a line start or after a blank, outside the quoted scalars of the
// nodes (located by their positions). The YAML library does not keep
// every comment in its nodes (those inside flow collections are dropped),
// so the bytes are scanned. A '#' in a block scalar counts too: in doubt,
// refuse.
func (e *Editor) hasComment(start, end int, nodes ...*yaml.Node) bool {
	quoted := map[int]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
			quoted[e.offset(n.Line, n.Column)] = true
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	for i := start; i < end; i++ {
		c := e.src[i]
		switch {
		case quoted[i] && (c == '\'' || c == '"'):
			i = skipQuoted(e.src[:end], i)
		case c == '#' && (i == start || e.src[i-1] == ' ' || e.src[i-1] == '\t' || e.src[i-1] == '\n'):
			return true
		}
	}
	return false
}

// skipQuoted returns the offset of the closing quote of the quoted scalar
// opening at src[i] (len(src) when it is not closed).
func skipQuoted(src []byte, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch {
		case q == '"' && src[j] == '\\':
			j++
		case src[j] == q && q == '\'' && j+1 < len(src) && src[j+1] == '\'':
			j++
		case src[j] == q:
			return j
		}
	}
	return len(src)
}

// sameValue compares two YAML values, ignoring style and mapping order. A
// string and a timestamp with the same text are the same value (the
// editor writes dates plain); anchors and explicit tags never are.
func sameValue(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.Anchor != "" || a.Style&yaml.TaggedStyle != 0 || len(a.Content) != len(b.Content) {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		textual := func(tag string) bool { return tag == "!!str" || tag == "!!timestamp" }
		return a.Value == b.Value && (a.ShortTag() == b.ShortTag() || textual(a.ShortTag()) && textual(b.ShortTag()))
	case yaml.SequenceNode:
		for i := range a.Content {
			if !sameValue(a.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		for i := 0; i < len(a.Content); i += 2 {
			found := false
			for j := 0; j < len(b.Content); j += 2 {
				if sameValue(a.Content[i], b.Content[j]) {
					found = sameValue(a.Content[i+1], b.Content[j+1])
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return false
}
