// Package vecsearch is the arithmetic of search by meaning: notes split
// into heading-aware chunks keyed by a content hash, vectors quantised to
// int8, a brute-force cosine scan over every chunk in memory, and
// reciprocal rank fusion of ranked lists. It does no I/O.
package vecsearch

import (
	"crypto/sha256"
	"strings"
	"unicode/utf8"
)

// MaxChunkBytes bounds the body text of one chunk (about 300 tokens of
// English): small enough for every embedding model's context, large
// enough to keep a paragraph whole.
const MaxChunkBytes = 1200

// Chunk is one part of a note: its body text between Start and End (byte
// offsets), under Heading.
type Chunk struct {
	Start, End int
	Heading    string
	// Text is what is embedded: the note title, the heading and the body
	// text, one per line.
	Text string
	// Hash keys the chunk's vector; the zero hash marks a chunk with no
	// text (never embedded).
	Hash [16]byte
}

// Split cuts a note into chunks at its Markdown headings (outside code
// fences), and a section longer than MaxChunkBytes at paragraph, line or
// word boundaries. A note with no body text is one chunk of its title.
func Split(title, body string) []Chunk {
	var out []Chunk
	for _, s := range sections(body) {
		for start := s.start; start < s.end; {
			end := cut(body, start, s.end)
			if strings.TrimSpace(body[start:end]) != "" {
				out = append(out, makeChunk(title, s.heading, body, start, end))
			}
			start = end
		}
	}
	if len(out) == 0 {
		out = append(out, makeChunk(title, "", body, 0, 0))
	}
	return out
}

func makeChunk(title, heading, body string, start, end int) Chunk {
	parts := make([]string, 0, 3)
	for _, p := range []string{strings.TrimSpace(title), heading, strings.TrimSpace(body[start:end])} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	c := Chunk{Start: start, End: end, Heading: heading, Text: strings.Join(parts, "\n")}
	if c.Text != "" {
		sum := sha256.Sum256([]byte(c.Text))
		copy(c.Hash[:], sum[:16])
	}
	return c
}

type section struct {
	start, end int
	heading    string
}

// sections splits body at ATX headings (# to ######) outside ``` or ~~~
// fences; each section starts at its heading line.
func sections(body string) []section {
	var out []section
	cur := section{}
	fence := ""
	for off := 0; off < len(body); {
		nl := strings.IndexByte(body[off:], '\n')
		lineEnd := len(body)
		if nl >= 0 {
			lineEnd = off + nl + 1
		}
		line := strings.TrimSpace(body[off:lineEnd])
		switch {
		case fence != "":
			if strings.HasPrefix(line, fence) {
				fence = ""
			}
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fence = line[:3]
		case isHeading(line):
			if off > cur.start {
				cur.end = off
				out = append(out, cur)
			}
			cur = section{start: off, heading: strings.TrimSpace(strings.TrimLeft(line, "#"))}
		}
		off = lineEnd
	}
	cur.end = len(body)
	if cur.end > cur.start {
		out = append(out, cur)
	}
	return out
}

func isHeading(line string) bool {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(line) || line[n] == ' ')
}

// cut returns where the chunk starting at start ends: end when the rest
// fits, else the last paragraph break, line break or space within
// MaxChunkBytes (past its first half), else a rune boundary.
func cut(body string, start, end int) int {
	if end-start <= MaxChunkBytes {
		return end
	}
	limit := start + MaxChunkBytes
	window := body[start:limit]
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(window, sep); i >= MaxChunkBytes/2 {
			return start + i + len(sep)
		}
	}
	for limit > start && !utf8.RuneStart(body[limit]) {
		limit--
	}
	return limit
}
