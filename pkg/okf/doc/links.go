package doc

import (
	"bytes"
	"net/url"
	"strings"
)

// Link is an inline Markdown link [text](target) found in a body.
type Link struct {
	Text   string // raw link text between the brackets
	Target string // raw destination, without <> and without a title
	Line   int    // 1-based line within the body (see Document.BodyStartLine)
}

// Bounds that keep link scanning linear-ish on adversarial input.
const (
	maxDestLen    = 2048
	maxTitleLen   = 1024
	maxParenDepth = 32
)

// Links returns the inline Markdown links [text](target) in body, in order.
// Fenced code blocks (``` and ~~~), inline code spans and images
// (![alt](src)) are skipped; reference-style links and autolinks are not
// reported. Targets keep their raw text.
func Links(body []byte) []Link {
	var out []Link
	for _, sg := range segments(body) {
		seg := body[sg.start:sg.end]
		if bytes.IndexByte(seg, '[') < 0 {
			continue
		}
		out = scanLinks(seg, sg.line, out)
	}
	return out
}

func scanLinks(seg []byte, baseLine int, out []Link) []Link {
	spans := codeSpans(seg)
	opens, closes := matchBrackets(seg, spans)
	if len(opens) == 0 {
		return out
	}
	sc := spanCursor{spans: spans}
	line, counted := baseLine, 0
	lineAt := func(pos int) int {
		line += bytes.Count(seg[counted:pos], []byte{'\n'})
		counted = pos
		return line
	}
	o := 0
	for i := 0; i < len(seg); {
		if j := sc.skip(i); j != i {
			i = j
			continue
		}
		switch seg[i] {
		case '\\':
			i += 2
			continue
		case '!':
			if i+1 < len(seg) && seg[i+1] == '[' {
				if end, _, ok := linkAt(seg, i+1, opens, closes, &o); ok {
					i = end // image: skipped entirely
					continue
				}
				i += 2
				continue
			}
		case '[':
			if end, target, ok := linkAt(seg, i, opens, closes, &o); ok {
				cl := closes[o]
				out = append(out, Link{Text: string(seg[i+1 : cl]), Target: target, Line: lineAt(i)})
				i = end
				continue
			}
		}
		i++
	}
	return out
}

// matchBrackets pairs '[' with ']' outside code spans and escapes. closes[k]
// is the position of the ']' matching opens[k], or -1.
func matchBrackets(seg []byte, spans []span) (opens, closes []int) {
	sc := spanCursor{spans: spans}
	var stack []int
	for i := 0; i < len(seg); {
		if j := sc.skip(i); j != i {
			i = j
			continue
		}
		switch seg[i] {
		case '\\':
			i += 2
			continue
		case '[':
			stack = append(stack, len(opens))
			opens = append(opens, i)
			closes = append(closes, -1)
		case ']':
			if n := len(stack); n > 0 {
				closes[stack[n-1]] = i
				stack = stack[:n-1]
			}
		}
		i++
	}
	return opens, closes
}

// linkAt tries to read an inline link whose '[' is at i. *o is advanced to
// the index of i in opens. It returns the position after ')' and the target.
func linkAt(seg []byte, i int, opens, closes []int, o *int) (end int, target string, ok bool) {
	for *o < len(opens) && opens[*o] < i {
		*o++
	}
	if *o >= len(opens) || opens[*o] != i {
		return 0, "", false
	}
	c := closes[*o]
	if c < 0 || c+1 >= len(seg) || seg[c+1] != '(' {
		return 0, "", false
	}
	return parseDest(seg, c+2)
}

// parseDest parses `dest "title")` starting just after '('.
func parseDest(seg []byte, p int) (end int, target string, ok bool) {
	i := skipLinkSpace(seg, p)
	if i >= len(seg) {
		return 0, "", false
	}
	if seg[i] == '<' {
		j := i + 1
		for ; j < len(seg) && j-i <= maxDestLen; j++ {
			c := seg[j]
			if c == '\\' && j+1 < len(seg) && isASCIIPunct(seg[j+1]) {
				j++
				continue
			}
			if c == '\n' || c == '<' {
				return 0, "", false
			}
			if c == '>' {
				break
			}
		}
		if j >= len(seg) || seg[j] != '>' {
			return 0, "", false
		}
		target = string(seg[i+1 : j])
		i = j + 1
	} else {
		start, depth := i, 0
	dest:
		for ; i < len(seg); i++ {
			if i-start > maxDestLen {
				return 0, "", false
			}
			switch c := seg[i]; {
			case c == '\\' && i+1 < len(seg) && isASCIIPunct(seg[i+1]):
				i++
			case c == '(':
				depth++
				if depth > maxParenDepth {
					return 0, "", false
				}
			case c == ')':
				if depth == 0 {
					break dest
				}
				depth--
			case c <= ' ':
				break dest
			}
		}
		if depth != 0 {
			return 0, "", false
		}
		target = string(seg[start:i])
	}
	j := skipLinkSpace(seg, i)
	if j < len(seg) && j > i && (seg[j] == '"' || seg[j] == '\'' || seg[j] == '(') {
		k, ok := skipTitle(seg, j)
		if !ok {
			return 0, "", false
		}
		j = skipLinkSpace(seg, k)
	}
	if j >= len(seg) || seg[j] != ')' {
		return 0, "", false
	}
	return j + 1, target, true
}

// skipTitle skips a link title opening at j and returns the position after it.
func skipTitle(seg []byte, j int) (int, bool) {
	closer := seg[j]
	if closer == '(' {
		closer = ')'
	}
	for k := j + 1; k < len(seg) && k-j <= maxTitleLen; k++ {
		c := seg[k]
		if c == '\\' && k+1 < len(seg) && isASCIIPunct(seg[k+1]) {
			k++
			continue
		}
		if c == closer {
			return k + 1, true
		}
		if closer == ')' && c == '(' {
			return 0, false
		}
	}
	return 0, false
}

// skipLinkSpace skips spaces, tabs and at most one line ending.
func skipLinkSpace(seg []byte, i int) int {
	nl := false
	for i < len(seg) {
		switch seg[i] {
		case ' ', '\t', '\r':
		case '\n':
			if nl {
				return i
			}
			nl = true
		default:
			return i
		}
		i++
	}
	return i
}

// ResolveConceptTarget maps a link target written in concept fromID (a
// bundle-relative id without ".md", e.g. "tables/events_") to the id of the
// concept it points at. Absolute targets ("/x/y.md") resolve against the
// bundle root, others against fromID's directory; "#fragment" and "?query"
// are dropped, percent- and backslash-escapes are decoded. ok is false for
// URLs with a scheme, targets not ending in ".md", targets escaping the
// bundle root, and reserved index.md / log.md files.
func ResolveConceptTarget(fromID, target string) (id string, ok bool) {
	t := strings.TrimSpace(target)
	if len(t) >= 2 && t[0] == '<' && t[len(t)-1] == '>' {
		t = t[1 : len(t)-1]
	}
	if hasScheme(t) || strings.HasPrefix(t, "//") {
		return "", false
	}
	if i := strings.IndexAny(t, "#?"); i >= 0 {
		t = t[:i]
	}
	t = unescapeBackslashes(t)
	if strings.IndexByte(t, '%') >= 0 {
		u, err := url.PathUnescape(t)
		if err != nil {
			return "", false
		}
		t = u
	}
	if !strings.HasSuffix(t, ".md") || strings.ContainsAny(t, "\\\x00") {
		return "", false
	}
	var segs []string
	if !strings.HasPrefix(t, "/") {
		from := strings.Trim(fromID, "/")
		if k := strings.LastIndexByte(from, '/'); k >= 0 {
			t = from[:k] + "/" + t
		}
	}
	for _, s := range strings.Split(t, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(segs) == 0 {
				return "", false // escapes the bundle root
			}
			segs = segs[:len(segs)-1]
		default:
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		return "", false
	}
	switch segs[len(segs)-1] {
	case ".md", "..md", "...md", "index.md", "log.md":
		return "", false // no usable id, or a reserved file
	}
	joined := strings.Join(segs, "/")
	return strings.TrimSuffix(joined, ".md"), true
}

// hasScheme reports whether t starts with an RFC 3986 scheme and ':'.
func hasScheme(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.'):
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

func unescapeBackslashes(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
