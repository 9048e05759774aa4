// Package jsonscan reads JSON text in place: the one JSON string scanner
// notebridge's hand-written JSON readers share (StringEnd), and a
// validating Scanner that walks a message once, handing out the bytes of
// the values it passes and how deeply they nest, so untrusted input is
// read a single time before anything decodes it.
package jsonscan

// plain marks the bytes a JSON string holds as they are: not a quote, not
// a backslash, not a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// StringEnd returns the index just past the JSON string whose opening
// quote is b[i], and whether its contents are valid JSON: no control
// character, and only the escapes \" \\ \/ \b \f \n \r \t and \u with four
// hex digits. The string ends at the first quote not escaped by a
// backslash, valid or not; one without a closing quote ends at len(b) and
// is not valid.
func StringEnd(b []byte, i int) (end int, valid bool) {
	valid = true
	for j := i + 1; j < len(b); j++ {
		if plain[b[j]] {
			continue
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, valid
		case c == '\\':
			j++
			if j >= len(b) {
				return len(b), false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				valid = valid && j+4 < len(b) && isHex(b[j+1]) && isHex(b[j+2]) && isHex(b[j+3]) && isHex(b[j+4])
			default:
				valid = false
			}
		default: // a control character
			valid = false
		}
	}
	return len(b), false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Value is a JSON value a Scanner read: valid JSON, without surrounding
// whitespace, and its nesting depth (1 for {} or [], 0 for a scalar).
// Only this package builds one, so holding a Value means the bytes were
// checked.
type Value struct {
	raw   []byte
	depth int
}

// Bytes returns the value's bytes, a sub-slice of the scanned text.
func (v Value) Bytes() []byte { return v.raw }

// Depth returns how deeply the value nests.
func (v Value) Depth() int { return v.depth }

// Scanner walks one JSON text from its start, validating every byte it
// passes, once. Read a value with Value, or walk an object's members with
// Object; once either reports false the text is invalid (or the walk was
// stopped) and the Scanner is done.
type Scanner struct {
	b     []byte
	i     int
	depth int // open objects and arrays around the cursor
	peak  int // deepest depth reached inside the current Value
}

// NewScanner returns a Scanner at the start of b.
func NewScanner(b []byte) *Scanner { return &Scanner{b: b} }

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.space()
	return s.i == len(s.b)
}

// Value passes the value at the cursor and returns it.
func (s *Scanner) Value() (Value, bool) {
	s.space()
	start, base := s.i, s.depth
	s.peak = base
	if !s.value() {
		return Value{}, false
	}
	return Value{raw: s.b[start:s.i], depth: s.peak - base}, true
}

// Object walks the object at the cursor: fn gets each member's name, the
// raw bytes between its quotes, with the cursor at the member's value,
// which fn must pass with Value or Object. Object reports false when the
// text is not an object or not valid JSON, or when fn does.
func (s *Scanner) Object(fn func(name []byte, validName bool) bool) bool {
	s.space()
	return s.container('{', '}', func() bool {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		end, valid := StringEnd(s.b, s.i)
		name := s.b[s.i+1 : max(end-1, s.i+1)]
		s.i = end
		return s.colon() && fn(name, valid)
	})
}

// container passes the object or array at the cursor, delimited by open
// and close, with elem passing each element.
func (s *Scanner) container(open, close byte, elem func() bool) bool {
	if !s.open(open) {
		return false
	}
	if s.space(); s.i < len(s.b) && s.b[s.i] == close {
		s.close()
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.space(); {
		case s.i < len(s.b) && s.b[s.i] == ',':
			s.i++
			s.space()
		case s.i < len(s.b) && s.b[s.i] == close:
			s.close()
			return true
		default:
			return false
		}
	}
}

// MaxNesting is the deepest nesting a Scanner accepts, as encoding/json.
const MaxNesting = 10000

func (s *Scanner) open(c byte) bool {
	if s.i >= len(s.b) || s.b[s.i] != c || s.depth >= MaxNesting {
		return false
	}
	s.i++
	s.depth++
	s.peak = max(s.peak, s.depth)
	return true
}

func (s *Scanner) close() {
	s.i++
	s.depth--
}

func (s *Scanner) colon() bool {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return false
	}
	s.i++
	s.space()
	return true
}

func (s *Scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value passes one value, keeping peak up to date.
func (s *Scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		end, valid := StringEnd(s.b, s.i)
		s.i = end
		return valid
	case c == '{':
		return s.Object(func(_ []byte, validName bool) bool { return validName && s.value() })
	case c == '[':
		return s.container('[', ']', s.value)
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// number passes -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *Scanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		return s.digits()
	}
	return true
}

// digits passes one or more decimal digits.
func (s *Scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
