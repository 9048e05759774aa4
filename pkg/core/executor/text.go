package executor

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
)

// checkText refuses arguments holding a string (a value or a member name)
// that is not clean text: invalid UTF-8, an escaped lone surrogate
// ("\ud800") or NUL (raw or "\u0000"). Decoding would silently turn the
// first two into U+FFFD and store the third, so the raw bytes are read,
// before any handler decodes them. The error names the field (a JSON
// pointer, as schema problems do) and the byte offset in its decoded
// value, never the value. args must be valid JSON.
func checkText(args []byte) *domainerr.Error {
	if utf8.Valid(args) && !bytes.Contains(args, []byte(`\u`)) {
		return nil // a raw NUL is not valid JSON
	}
	w := textWalker{b: args}
	return w.value("")
}

type textWalker struct {
	b []byte
	i int
}

func (w *textWalker) space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

// value walks the value at the cursor, which path names.
func (w *textWalker) value(path string) *domainerr.Error {
	w.space()
	if w.i >= len(w.b) {
		return nil
	}
	switch w.b[w.i] {
	case '"':
		return w.str(path, "the string")
	case '{':
		w.i++
		for {
			w.space()
			if w.i >= len(w.b) || w.b[w.i] == '}' {
				w.i++
				return nil
			}
			if w.b[w.i] == ',' {
				w.i++
				continue
			}
			start := w.i
			if err := w.str(path, "a member name"); err != nil {
				return err
			}
			name := w.b[start+1 : w.i-1]
			w.space()
			w.i++ // the colon
			if err := w.value(path + "/" + pointerToken(name)); err != nil {
				return err
			}
		}
	case '[':
		w.i++
		for n := 0; ; {
			w.space()
			if w.i >= len(w.b) || w.b[w.i] == ']' {
				w.i++
				return nil
			}
			if w.b[w.i] == ',' {
				w.i++
				continue
			}
			if err := w.value(path + "/" + strconv.Itoa(n)); err != nil {
				return err
			}
			n++
		}
	}
	for w.i < len(w.b) && !strings.ContainsRune(",]} \t\n\r", rune(w.b[w.i])) {
		w.i++ // a number, true, false or null
	}
	return nil
}

// str passes the string at the cursor, checking its text; offset counts
// the bytes of its decoded value.
func (w *textWalker) str(path, what string) *domainerr.Error {
	end, _ := jsonscan.StringEnd(w.b, w.i)
	s := w.b[w.i+1 : end-1]
	w.i = end
	offset := 0
	for j := 0; j < len(s); {
		c := s[j]
		switch {
		case c == '\\' && s[j+1] == 'u':
			r := hex4(s[j+2 : j+6])
			j += 6
			switch {
			case r == 0:
				return badText(path, what, "NUL", offset)
			case r >= 0xd800 && r < 0xdc00:
				if j+6 > len(s) || s[j] != '\\' || s[j+1] != 'u' {
					return badText(path, what, "a lone surrogate", offset)
				}
				if lo := hex4(s[j+2 : j+6]); lo < 0xdc00 || lo >= 0xe000 {
					return badText(path, what, "a lone surrogate", offset)
				}
				j += 6
				offset += 4
			case r >= 0xdc00 && r < 0xe000:
				return badText(path, what, "a lone surrogate", offset)
			default:
				offset += utf8.RuneLen(r)
			}
		case c == '\\':
			j += 2
			offset++
		case c < utf8.RuneSelf:
			j++
			offset++
		default:
			r, size := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && size == 1 {
				return badText(path, what, "invalid UTF-8", offset)
			}
			j += size
			offset += size
		}
	}
	return nil
}

func hex4(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

// pointerToken escapes a member name as a JSON pointer token.
func pointerToken(name []byte) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(string(name))
}

func badText(path, what, problem string, offset int) *domainerr.Error {
	if path == "" {
		path = "/"
	}
	reason := what + " holds " + problem + " at byte " + strconv.Itoa(offset)
	return domainerr.New(domainerr.InvalidArgument, "argument %s: %s", path, reason).
		WithDetails(map[string]any{"field": path, "offset": offset,
			"problems": []Problem{{Path: path, Reason: reason}}})
}
