package mcpadapter

import (
	"bufio"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
)

const hexDigits = "0123456789abcdef"

// writeStringBody writes b as the inside of a JSON string, escaped exactly
// as json.Marshal escapes a Go string (HTML escaping on): ", \ and control
// characters escaped, <, > and & as \u003c, \u003e, \u0026, invalid UTF-8
// as \ufffd, U+2028 and U+2029 as \u2028 and \u2029. Runs that need no
// escape are written straight from b, so nothing is copied.
func writeStringBody(w *bufio.Writer, b []byte) {
	start := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			w.Write(b[start:i])
			switch c {
			case '"', '\\':
				w.WriteByte('\\')
				w.WriteByte(c)
			case '\b':
				w.WriteString(`\b`)
			case '\f':
				w.WriteString(`\f`)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				writeU00(w, c)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			w.Write(b[start:i])
			w.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			w.Write(b[start:i])
			w.WriteString(`\u202`)
			w.WriteByte(hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	w.Write(b[start:])
}

// writeCompact writes the valid JSON b as json.Marshal writes a
// json.RawMessage: whitespace between tokens dropped, and inside strings
// <, > and & escaped as \u003c, \u003e, \u0026, and U+2028 and U+2029 as
// \u2028 and \u2029. The caller checks b with json.Valid first.
func writeCompact(w *bufio.Writer, b []byte) {
	start := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			w.Write(b[start:i])
			start = i + 1
		case '"':
			end, _ := jsonscan.StringEnd(b, i)
			w.Write(b[start:i])
			writeHTMLSafe(w, b[i:end])
			i, start = end-1, end
		}
	}
	w.Write(b[start:])
}

// writeHTMLSafe writes the JSON string s with <, > and & escaped as
// \u003c, \u003e, \u0026, and U+2028 and U+2029 as \u2028 and \u2029.
func writeHTMLSafe(w *bufio.Writer, s []byte) {
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '<' || c == '>' || c == '&':
			w.Write(s[start:i])
			writeU00(w, c)
			start = i + 1
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8:
			w.Write(s[start:i])
			w.WriteString(`\u202`)
			w.WriteByte(hexDigits[s[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	w.Write(s[start:])
}

// writeU00 writes the escape \u00XX of an ASCII byte.
func writeU00(w *bufio.Writer, c byte) {
	w.WriteString(`\u00`)
	w.WriteByte(hexDigits[c>>4])
	w.WriteByte(hexDigits[c&0xF])
}
