package bearer

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzParseBearer: any header value either yields a token of visible ASCII
// that round-trips exactly, or fails closed.
func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "Bearer  abc", "bearer abc", "Bearer a,b", "Bearer é", "", "Bearer "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tok, err := ParseBearer(http.Header{"Authorization": {v}})
		if err != nil {
			return
		}
		if "Bearer "+tok != v || tok == "" || strings.ContainsAny(tok, " ,\t") {
			t.Fatalf("accepted malformed %q as %q", v, tok)
		}
		for i := 0; i < len(tok); i++ {
			if tok[i] <= 0x20 || tok[i] >= 0x7f {
				t.Fatalf("accepted non-visible byte in %q", v)
			}
		}
	})
}
