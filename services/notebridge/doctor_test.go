package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// doctorRun parses args as doctor does, with DNS answered by resolves,
// and returns each check's problem by check name ("" when it passed).
func doctorRun(t *testing.T, resolves bool, args ...string) map[string]finding {
	t.Helper()
	c := &config{}
	if err := parse(doctorFlags(c, io.Discard), append([]string{"--state-dir", t.TempDir()}, args...)); err != nil {
		t.Fatal(err)
	}
	c.lookupHost = func(context.Context, string) ([]string, error) {
		if resolves {
			return []string{"203.0.113.7"}, nil
		}
		return nil, errors.New("no such host")
	}
	out := map[string]finding{}
	for _, f := range diagnose(context.Background(), c) {
		name, _, _ := strings.Cut(f.check, " (")
		out[strings.Fields(name)[0]] = f
	}
	return out
}

// TestDoctorNamesEachProblemWithItsFix: a sound setting passes every
// check; each kind of mistake a newcomer makes is named, with its fix,
// by the check it belongs to, and the others still pass.
func TestDoctorNamesEachProblemWithItsFix(t *testing.T) {
	_, joplinURL, tokenFile := joplinfake.Serve(t, "doctor-token-0123456789")
	good := []string{"--joplin-url", joplinURL, "--joplin-token-file", tokenFile, "--joplin-wait", "0s"}

	for name, f := range doctorRun(t, true, good...) {
		if f.problem != "" {
			t.Errorf("sound settings: %s: %s", name, f.problem)
		}
	}

	wrong := filepath.Join(t.TempDir(), "wrong-token")
	os.WriteFile(wrong, []byte("not-the-token"), 0o600)
	sameAsJoplin := filepath.Join(t.TempDir(), "mcp-token")
	b, _ := os.ReadFile(tokenFile)
	os.WriteFile(sameAsJoplin, b, 0o600)
	for _, tc := range []struct {
		name, check, problem, fix string
		resolves                  bool
		args                      []string
	}{
		{"a refused token", "Joplin", "", "copy the token", true,
			[]string{"--joplin-url", joplinURL, "--joplin-token-file", wrong, "--joplin-wait", "0s"}},
		{"Joplin down", "Joplin", "", "start Joplin", true,
			[]string{"--joplin-url", "http://127.0.0.1:1", "--joplin-token-file", tokenFile, "--joplin-wait", "0s"}},
		{"no token file", "Joplin", "cannot be read", "Web Clipper", true,
			[]string{"--joplin-url", joplinURL, "--joplin-token-file", filepath.Join(t.TempDir(), "none"), "--joplin-wait", "0s"}},
		{"OAuth on localhost", "OAuth", "localhost", "NOTEBRIDGE_DOMAIN", true, append([]string{"--oauth", "--domain", "localhost"}, good...)},
		{"a domain that does not resolve", "DNS", "does not resolve", "DNS", false, append([]string{"--oauth", "--domain", "notes.example.org"}, good...)},
		{"one token in two files", "credentials", "", "three different files", true, append([]string{"--mcp-token-file", sameAsJoplin}, good...)},
		{"Actions half on", "GPT", "both", "or neither", true, append([]string{"--actions-enabled"}, good...)},
		{"a bad setting", "settings", "--tools", "serve -h", true, append([]string{"--tools", "most"}, good...)},
		{"a bad scope", "notebook", "", "notebook-scopes", true, append([]string{"--mcp-notebooks", "Work//Clients"}, good...)},
		{"an embedding server down", "embedding", "", "--profile meaning", true,
			append([]string{"--embeddings-url", "http://127.0.0.1:1/v1", "--embeddings-model", "nomic-embed-text"}, good...)},
	} {
		got := doctorRun(t, tc.resolves, tc.args...)
		f, ok := got[tc.check]
		if !ok || f.problem == "" || !strings.Contains(f.problem, tc.problem) || !strings.Contains(f.fix, tc.fix) {
			t.Errorf("%s: check %q = %+v (found: %v)", tc.name, tc.check, f, ok)
		}
		for name, other := range got {
			if name != tc.check && other.problem != "" && !(tc.check == "Joplin" && name == "Joplin") {
				t.Errorf("%s: check %s also failed: %s", tc.name, name, other.problem)
			}
		}
	}
}

// TestDoctorCommand: the command prints every check and exits 1 with a
// problem, 0 without; it binds no port and writes no token.
func TestDoctorCommand(t *testing.T) {
	_, joplinURL, tokenFile := joplinfake.Serve(t, "doctor-token-0123456789")
	state := t.TempDir()
	stdout, stderr, code := runCLI(t, "doctor", "--state-dir", state, "--joplin-url", joplinURL, "--joplin-token-file", tokenFile)
	if code != 0 || !strings.Contains(stdout, "ok       Joplin at "+joplinURL) || !strings.Contains(stdout, "checks passed") {
		t.Fatalf("sound settings: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "doctor", "--state-dir", state, "--joplin-url", joplinURL, "--joplin-token-file", tokenFile,
		"--oauth", "--domain", "localhost")
	if code != 1 || !strings.Contains(stdout, "PROBLEM  OAuth public origin") || !strings.Contains(stdout, "fix: ") ||
		!strings.Contains(stderr, "1 of") {
		t.Fatalf("OAuth on localhost: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, name := range []string{"mcp-token", "owner-passphrase", passphraseHashName} {
		if _, err := os.Stat(filepath.Join(state, name)); err == nil {
			t.Errorf("doctor wrote %s", name)
		}
	}
}
