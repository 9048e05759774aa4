package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetupCommand: `notebridge setup` asks on stderr and reads the answers
// from stdin (a pipe here: secrets are read as lines), prints the next
// steps on stdout, and writes .env 0600; a secret is taken from a file,
// never from a flag's value.
func TestSetupCommand(t *testing.T) {
	dir := t.TempDir()
	env := filepath.Join(dir, ".env")
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("cf-tunnel-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	stdin := strings.NewReader("notes.example.com\nnone\noff\n")
	code := run(context.Background(), []string{"setup", "--env", env, "--reach", "cloudflare", "--cloudflare-token-file", token}, stdin, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(env); st.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %04o", st.Mode().Perm())
	}
	for _, want := range []string{"NOTEBRIDGE_DOMAIN=notes.example.com\n", "NOTEBRIDGE_CLOUDFLARE_TUNNEL_TOKEN=cf-tunnel-token\n", "COMPOSE_PROFILES=bundled-joplin,cloudflare\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf(".env lacks %q:\n%s", want, b)
		}
	}
	if !strings.Contains(stderr.String(), "public hostname") || !strings.Contains(stdout.String(), "https://notes.example.com/mcp") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), "cf-tunnel-token") {
		t.Error("the token is printed")
	}
	// A refused answer ends a scripted run with its code (exit 1).
	stderr.Reset()
	if code := run(context.Background(), []string{"setup", "--env", env, "--non-interactive", "--reach", "ftp"}, strings.NewReader(""), &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "SETUP_BAD_ANSWER") {
		t.Errorf("a bad answer: exit %d, %s", code, stderr.String())
	}
}
