package okfops

import (
	"regexp"
	"strconv"
	"strings"
)

// citationSection is a v0.1 "# Citations" section located in a body.
type citationSection struct {
	start, end int // byte span in the body, heading line included
	items      []citation
}

// citation is one entry of the section, parsed or not.
type citation struct {
	text     string // the line as written, without its marker
	label    int    // N of a "[N] ..." entry, else 0
	title    string
	resource string
	parsed   bool // an unambiguous URL or [title](URL)
}

var (
	markdownLink = regexp.MustCompile(`^\[([^\[\]]+)\]\((https?://[^\s()]+)\)$`)
	bareURL      = regexp.MustCompile(`^<?(https?://[^\s<>]+)>?$`)
	numbered     = regexp.MustCompile(`^\[(\d{1,4})\]\s+(.*)$`)
	headingLine  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// findCitations locates the first level-1 or level-2 "Citations" section
// outside fenced code. ok is false when there is none.
func findCitations(body []byte) (citationSection, bool) {
	var sec citationSection
	level, inFence, fence := 0, false, ""
	pos := 0
	for pos < len(body) {
		end := len(body)
		if i := strings.IndexByte(string(body[pos:]), '\n'); i >= 0 {
			end = pos + i + 1
		}
		line := strings.TrimRight(string(body[pos:end]), "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			if !inFence {
				inFence, fence = true, trimmed[:3]
			} else if strings.HasPrefix(trimmed, fence) {
				inFence = false
			}
			if level > 0 {
				sec.items = append(sec.items, citation{text: line})
			}
		case inFence:
			if level > 0 {
				sec.items = append(sec.items, citation{text: line})
			}
		default:
			if m := headingLine.FindStringSubmatch(line); m != nil && len(line)-len(trimmed) < 4 {
				l := len(m[1])
				if level > 0 && l <= level {
					sec.end = pos
					return sec, true
				}
				if level == 0 && l <= 2 && strings.EqualFold(m[2], "citations") {
					level, sec.start = l, pos
				}
			} else if level > 0 && strings.TrimSpace(line) != "" {
				sec.items = append(sec.items, parseCitation(line))
			}
		}
		pos = end
	}
	if level > 0 {
		sec.end = len(body)
		return sec, true
	}
	return sec, false
}

// parseCitation reads one entry line: "- URL", "- [title](URL)",
// "[N] [title](URL)" and the like. Anything else is ambiguous and needs an
// explicit mapping.
func parseCitation(line string) citation {
	if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
		return citation{text: strings.TrimSpace(line)} // a continuation line: ambiguous
	}
	s := strings.TrimSpace(line)
	for _, marker := range []string{"- ", "* ", "+ "} {
		s = strings.TrimPrefix(s, marker)
	}
	if i := strings.Index(s, ". "); i > 0 && i <= 4 {
		if _, err := strconv.Atoi(s[:i]); err == nil {
			s = s[i+2:]
		}
	}
	c := citation{text: s}
	if m := numbered.FindStringSubmatch(s); m != nil {
		c.label, _ = strconv.Atoi(m[1])
		s = strings.TrimSpace(m[2])
	}
	if m := markdownLink.FindStringSubmatch(s); m != nil {
		c.title, c.resource, c.parsed = strings.TrimSpace(m[1]), m[2], true
	} else if m := bareURL.FindStringSubmatch(s); m != nil {
		c.resource, c.parsed = m[1], true
	}
	return c
}

var slugRun = regexp.MustCompile(`[^a-z0-9]+`)

// citationID derives a stable footnote key from a URL: host without www.,
// then the last path segment, lower-case, dash-separated, at most 40
// characters. taken makes it unique with -2, -3, ...
func citationID(resource string, taken map[string]bool) string {
	s := strings.ToLower(resource)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	s = strings.TrimPrefix(s, "www.")
	host, path, _ := strings.Cut(s, "/")
	host = strings.TrimSuffix(strings.TrimSuffix(host, ".com"), ".org")
	segs := strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '?' || r == '#' })
	id := host
	if len(segs) > 0 {
		id += "-" + segs[len(segs)-1]
	}
	id = strings.Trim(slugRun.ReplaceAllString(id, "-"), "-")
	if len(id) > 40 {
		id = id[:40]
		if i := strings.LastIndexByte(id, '-'); i >= 20 {
			id = id[:i] // cut at a word boundary
		}
		id = strings.TrimRight(id, "-")
	}
	if id == "" {
		id = "source"
	}
	out := id
	for n := 2; taken[out]; n++ {
		out = id + "-" + strconv.Itoa(n)
	}
	taken[out] = true
	return out
}

// replaceNumberedRefs rewrites "[N]" references in body text outside the
// citations section, fenced code and inline code into "[^id]" keyed
// footnotes. A "[N]" followed by "(", "[" or ":" is a link or a
// definition and is left alone.
func replaceNumberedRefs(body string, labels map[int]string) (string, int) {
	if len(labels) == 0 {
		return body, 0
	}
	var out strings.Builder
	n, inFence := 0, false
	for _, line := range strings.SplitAfter(body, "\n") {
		t := strings.TrimLeft(line, " ")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		if inFence {
			out.WriteString(line)
			continue
		}
		inCode := false
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c == '`' {
				inCode = !inCode
			}
			if c == '[' && !inCode {
				if j := strings.IndexByte(line[i:], ']'); j > 1 {
					if num, err := strconv.Atoi(line[i+1 : i+j]); err == nil {
						next := byte(0)
						if i+j+1 < len(line) {
							next = line[i+j+1]
						}
						if id, ok := labels[num]; ok && next != '(' && next != '[' && next != ':' {
							out.WriteString("[^" + id + "]")
							i += j
							n++
							continue
						}
					}
				}
			}
			out.WriteByte(c)
		}
	}
	return out.String(), n
}

func itoa(n int) string { return strconv.Itoa(n) }
