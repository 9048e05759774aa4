package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var seeds = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+3`, `true`, ` null `, `{"a":[1,{"b":"[[\"{"}],"c":{}}`,
	`"\u00e9\ud83d\ude00\n\"\\\/"`, `"\x"`, `"\u12"`, "\"a\tb\"", `{"a":1,}`, `[1 2]`, `01`, `1.`, `.5`, `-`,
	`{"a" 1}`, `{1:2}`, `tru`, `nulls`, `[[[[[[`, `{"a":"b"}x`, "\"\xff\"", `{"\u0061":1}`,
}

// scanOne reads b as one JSON text with a Scanner.
func scanOne(b []byte) (Value, bool) {
	s := NewScanner(b)
	v, ok := s.Value()
	return v, ok && s.End()
}

// FuzzScannerMatchesEncodingJSON: the Scanner accepts exactly what
// encoding/json accepts, and reports the value's bytes and nesting depth
// as a real decoder sees them.
func FuzzScannerMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := scanOne(b)
		if ok != json.Valid(b) {
			t.Fatalf("scanner says %v, encoding/json %v: %q", ok, !ok, b)
		}
		if !ok {
			return
		}
		if !bytes.Equal(v.Bytes(), bytes.TrimSpace(b)) {
			t.Fatalf("value bytes %q of %q", v.Bytes(), b)
		}
		if d := decodedDepth(b); v.Depth() != d {
			t.Fatalf("depth %d, decoder %d: %q", v.Depth(), d, b)
		}
	})
}

// TestNestingLimitMatchesEncodingJSON: MaxNesting levels pass, one more
// does not, as with encoding/json.
func TestNestingLimitMatchesEncodingJSON(t *testing.T) {
	for _, n := range []int{MaxNesting, MaxNesting + 1} {
		b := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		if v, ok := scanOne(b); ok != json.Valid(b) || ok && v.Depth() != n {
			t.Errorf("%d levels: scanner %v (depth %d), encoding/json %v", n, ok, v.Depth(), json.Valid(b))
		}
	}
}

// FuzzStringEnd: a string StringEnd calls valid is one JSON string to
// encoding/json, and one it calls invalid is not; the end is the first
// quote no backslash escapes.
func FuzzStringEnd(f *testing.F) {
	for _, s := range seeds {
		if strings.HasPrefix(s, `"`) {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = append([]byte{'"'}, b...)
		end, valid := StringEnd(b, 0)
		if end < 1 || end > len(b) {
			t.Fatalf("end %d out of range for %q", end, b)
		}
		closed := end > 1 && b[end-1] == '"'
		if valid && !closed {
			t.Fatalf("unterminated string %q called valid", b)
		}
		if closed && valid != json.Valid(b[:end]) {
			t.Fatalf("valid %v, encoding/json %v: %q", valid, !valid, b[:end])
		}
		if closed && valid {
			var str string
			if err := json.Unmarshal(b[:end], &str); err != nil {
				t.Fatalf("%q: %v", b[:end], err)
			}
		}
	})
}

// FuzzObjectMembers: walking an object member by member passes the same
// members, in order, that a decoder reads, and accepts only valid JSON.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := NewScanner(b)
		var names []string
		var values [][]byte
		ok := s.Object(func(name []byte, validName bool) bool {
			if !validName {
				return false
			}
			var n string
			if err := json.Unmarshal(append(append([]byte{'"'}, name...), '"'), &n); err != nil {
				t.Fatalf("valid name %q does not decode: %v", name, err)
			}
			v, ok := s.Value()
			names, values = append(names, n), append(values, v.Bytes())
			return ok
		}) && s.End()
		if ok != (json.Valid(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{"))) {
			t.Fatalf("walk says %v for %q", ok, b)
		}
		if !ok {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.Token() // {
		for i := 0; dec.More(); i++ {
			tok, _ := dec.Token()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			if i >= len(names) || tok != names[i] || !bytes.Equal(compact(raw), compact(values[i])) {
				t.Fatalf("member %d: decoder %q=%s, walk %v", i, tok, raw, names)
			}
		}
	})
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	json.Compact(&out, b)
	return out.Bytes()
}

func decodedDepth(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, peak := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return peak
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			peak = max(peak, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
