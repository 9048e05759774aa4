package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// TestUncleanTextIsRefused: a title holding invalid UTF-8, a lone
// surrogate or NUL is INVALID_ARGUMENT naming the field and the byte
// offset of the decoded value, before the handler runs; clean text,
// escapes and surrogate pairs pass.
func TestUncleanTextIsRefused(t *testing.T) {
	var calls atomic.Int32
	ex, err := New(testRegistry(t, &calls), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	call := func(title string) *domainerr.Error {
		_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "echo_id",
			json.RawMessage(`{"id":"`+goodID+`","title":"`+title+`"}`))
		return derr
	}
	for _, c := range []struct {
		title, problem string
		offset         int
	}{
		{"ab\xffc", "invalid UTF-8", 2},
		{"é\xc3", "invalid UTF-8", 2},
		{`a\ud800`, "a lone surrogate", 1},
		{`\udc00x`, "a lone surrogate", 0},
		{`\ud83dx`, "a lone surrogate", 0},
		{`\n\ud800\ud800`, "a lone surrogate", 1},
		{`ab\u0000`, "NUL", 2},
		{`\ud83d\ude00\u0000`, "NUL", 4},
	} {
		before := calls.Load()
		derr := call(c.title)
		if derr == nil || derr.Code != domainerr.InvalidArgument || derr.Details["field"] != "/title" || derr.Details["offset"] != c.offset ||
			!strings.Contains(derr.Message, c.problem) || !strings.Contains(derr.Message, "/title") {
			t.Errorf("%q: %+v", c.title, derr)
		}
		if calls.Load() != before {
			t.Errorf("%q: the handler ran", c.title)
		}
	}
	for _, ok := range []string{"clean", `\u00e9t\u00e9`, `\ud83d\ude00`, "\xef\xbf\xbd", `a\"b\\`} {
		if derr := call(ok); derr != nil {
			t.Errorf("%q: %+v", ok, derr)
		}
	}
	// Nested fields and member names are named by their JSON pointer.
	for raw, field := range map[string]string{
		`{"a":[1,{"b~/":"x\u0000"}]}`: "/a/1/b~0~1",
		`{"a":{"k\ud800":1}}`:         "/a",
	} {
		if derr := checkText([]byte(raw)); derr == nil || derr.Details["field"] != field {
			t.Errorf("%s: %+v", raw, derr)
		}
	}
}

// FuzzCheckText holds checkText to what decoding loses: for valid JSON
// holding no U+FFFD of its own, checkText refuses exactly when a decoded
// string or member name holds NUL or the U+FFFD that decoding put in place
// of a bad byte or lone surrogate.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{`{"t":"ab\ud800"}`, "{\"t\":\"a\xff\"}", `["\u0000"]`, `{"\ud83d\ude00":"\n"}`, `[1,true,null,{"a":[]}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`)) {
			return
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber() // a number too large for float64 is still JSON
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		lossy := false
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				lossy = lossy || strings.ContainsAny(v, "\x00\uFFFD") || !utf8.ValidString(v)
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for k, e := range v {
					walk(k)
					walk(e)
				}
			}
		}
		walk(v)
		if got := checkText(b) != nil; got != lossy {
			t.Fatalf("%q: refused %v, decoding loses text %v", b, got, lossy)
		}
	})
}
