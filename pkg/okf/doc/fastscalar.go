package doc

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// Scalar, key and flow-collection helpers of the fast YAML path (see
// fastyaml.go).

// scalar makes a scalar node; line is a 0-based line index, col 1-based.
func (p *fastParser) scalar(value string, style yaml.Style, line, col int) *yaml.Node {
	n := p.node()
	n.Kind, n.Style, n.Value, n.Line, n.Column = yaml.ScalarNode, style, value, line+1, col
	if style != 0 {
		n.Tag = "!!str"
	} else {
		n.Tag = plainTag(value)
	}
	return n
}

// plainTag resolves a plain scalar exactly like the YAML library does.
func plainTag(v string) string {
	if v == "<<" {
		return "!!merge"
	}
	if v != "" {
		switch c := v[0]; {
		case c >= '0' && c <= '9':
		case c == '+' || c == '-' || c == '.' || c == '~' || c == '<':
		case c == 'y' || c == 'Y' || c == 'n' || c == 'N' || c == 't' || c == 'T' ||
			c == 'f' || c == 'F' || c == 'o' || c == 'O':
		default:
			return "!!str"
		}
	}
	if v != "" && isDigit(v[0]) && ClassifyTemporal(v) != TemporalInvalid && fracDigits(v) <= 9 {
		return "!!timestamp" // what the YAML library's time parsing concludes, without the cost
	}
	probe := yaml.Node{Kind: yaml.ScalarNode, Value: v}
	return probe.ShortTag()
}

// fracDigits counts the fractional-second digits of a classified timestamp.
func fracDigits(v string) int {
	if len(v) <= 20 || v[19] != '.' {
		return 0
	}
	n := 0
	for n+20 < len(v) && isDigit(v[n+20]) {
		n++
	}
	return n
}

// isSeqEntry reports whether content starts a block sequence entry.
func isSeqEntry(c []byte) bool {
	return len(c) > 0 && c[0] == '-' && (len(c) == 1 || c[1] == ' ')
}

// mapKey splits "key: rest" / "key:" content; ok is false when content is
// not a simple block mapping entry.
func mapKey(c []byte) (key []byte, rest int, ok bool) {
	if len(c) == 0 || isIndicator(c[0]) {
		return nil, 0, false
	}
	for k := 0; k < len(c) && k < 1000; k++ {
		if c[k] != ':' {
			continue
		}
		if k+1 == len(c) || c[k+1] == ' ' {
			key = c[:k]
			if len(key) == 0 || key[len(key)-1] == ' ' || key[len(key)-1] == ':' {
				return nil, 0, false
			}
			return key, k + 1, true
		}
	}
	return nil, 0, false
}

// isIndicator reports YAML indicator characters that cannot start a plain
// scalar on the fast path.
func isIndicator(c byte) bool {
	switch c {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return true
	}
	return false
}

// plainLineOK rejects plain-scalar text that YAML would read as more than a
// scalar (": ", a trailing ':') or that the fast path does not model.
func plainLineOK(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[len(b)-1] == ':' {
		return false
	}
	return !bytes.Contains(b, []byte(": "))
}

func trimRightSpace(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// flow parses a single-line flow node at pos on line li and returns the
// offset just after it.
func (p *fastParser) flow(li, pos, depth int) (*yaml.Node, int, bool) {
	if depth > fastMaxDepth {
		return nil, 0, false
	}
	end := p.lines[li].end
	switch p.src[pos] {
	case '"', '\'':
		q := p.src[pos]
		k := pos + 1
		var buf []byte
		for {
			if k >= end {
				return nil, 0, false // multi-line quoted scalars are not modelled
			}
			if p.src[k] == q {
				if q == '\'' && k+1 < end && p.src[k+1] == '\'' {
					if buf == nil {
						buf = append([]byte(nil), p.src[pos+1:k]...)
					}
					buf = append(buf, '\'')
					k += 2
					continue
				}
				break
			}
			if buf != nil {
				buf = append(buf, p.src[k])
			}
			k++
		}
		v := p.str[pos+1 : k]
		if buf != nil {
			v = string(buf)
		}
		style := yaml.DoubleQuotedStyle
		if q == '\'' {
			style = yaml.SingleQuotedStyle
		}
		return p.scalar(v, style, li, p.column(li, pos)), k + 1, true
	case '[', '{':
		return p.flowCollection(li, pos, depth)
	}
	return p.flowPlain(li, pos, false)
}

func (p *fastParser) flowCollection(li, pos, depth int) (*yaml.Node, int, bool) {
	end := p.lines[li].end
	isMap := p.src[pos] == '{'
	closer := byte(']')
	coll := p.node()
	coll.Kind, coll.Tag, coll.Style = yaml.SequenceNode, "!!seq", yaml.FlowStyle
	if isMap {
		closer = '}'
		coll.Kind, coll.Tag = yaml.MappingNode, "!!map"
	}
	coll.Line, coll.Column = li+1, p.column(li, pos)
	k := skipSpaces(p.src, pos+1, end)
	if k < end && p.src[k] == closer {
		return coll, k + 1, true
	}
	for {
		if k >= end {
			return nil, 0, false
		}
		if isMap {
			key, q, ok := p.flowPlain(li, k, true)
			if !ok || q+1 >= end || p.src[q] != ':' || p.src[q+1] != ' ' {
				return nil, 0, false
			}
			coll.Content = append(coll.Content, key)
			k = skipSpaces(p.src, q+1, end)
			if k >= end || p.src[k] == ',' || p.src[k] == '}' {
				return nil, 0, false // empty values are not modelled
			}
		}
		item, q, ok := p.flow(li, k, depth+1)
		if !ok {
			return nil, 0, false
		}
		coll.Content = append(coll.Content, item)
		k = skipSpaces(p.src, q, end)
		if k >= end {
			return nil, 0, false
		}
		switch p.src[k] {
		case ',':
			k = skipSpaces(p.src, k+1, end)
			if k < end && p.src[k] == closer {
				return coll, k + 1, true
			}
		case closer:
			return coll, k + 1, true
		default:
			return nil, 0, false
		}
	}
}

// flowPlain parses a plain scalar inside a flow collection. A key stops at
// ": "; values must not contain ':' followed by a space or flow indicator.
func (p *fastParser) flowPlain(li, pos int, key bool) (*yaml.Node, int, bool) {
	end := p.lines[li].end
	if pos >= end || isIndicator(p.src[pos]) && !(p.src[pos] == '-' && pos+1 < end && isFlowSafe(p.src[pos+1])) {
		return nil, 0, false
	}
	k := pos
	for ; k < end; k++ {
		c := p.src[k]
		if c == ',' || c == '[' || c == ']' || c == '{' || c == '}' {
			break
		}
		if c == '?' {
			return nil, 0, false // '?' ends flow plain scalars in the YAML library
		}
		if c == ':' && (k+1 == end || !isFlowSafe(p.src[k+1])) {
			if key && k+1 < end && p.src[k+1] == ' ' {
				break
			}
			return nil, 0, false
		}
	}
	v := trimRightSpace(p.src[pos:k])
	if len(v) == 0 || (key && len(v) != k-pos) || k-pos > 1000 {
		return nil, 0, false
	}
	return p.scalar(p.str[pos:pos+len(v)], 0, li, p.column(li, pos)), k, true
}

func isFlowSafe(c byte) bool {
	return c != ' ' && c != ',' && c != '[' && c != ']' && c != '{' && c != '}'
}

func skipSpaces(b []byte, k, end int) int {
	for k < end && b[k] == ' ' {
		k++
	}
	return k
}
