package oauthserver

import "testing"

// BenchmarkVerifyAccessToken is the authorization server's share of every
// OAuth /mcp request: the token looked up by its keyed hash in the store
// (with the state file's lock and freshness check, and the grant's
// last-use bookkeeping).
func BenchmarkVerifyAccessToken(b *testing.B) {
	a := newASTest(b, "")
	_, access, _ := a.tokens()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.as.VerifyAccessToken(b.Context(), access); err != nil {
			b.Fatal(err)
		}
	}
}
