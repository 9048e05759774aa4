package joplinfake

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// Serve starts a fake Joplin accepting token for the test's lifetime and
// returns it with its base URL and a private file holding the token.
func Serve(t testing.TB, token string) (fake *Server, url, tokenFile string) {
	t.Helper()
	fake = New(token)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	tokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return fake, srv.URL, tokenFile
}
