package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the binary with args and stdin closed, in a clean environment.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = cleanEnv("HOME=" + t.TempDir())
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return so.String(), se.String(), cmd.ProcessState.ExitCode()
}

func TestUnknownCommandIsNamed(t *testing.T) {
	for args, want := range map[string]string{
		"bogus":        `notebridge: unknown command "bogus"`,
		"mcp bogus":    `notebridge: unknown command "mcp bogus"`,
		"secrets nope": `notebridge: unknown command "secrets nope"`,
		"mcp":          `notebridge: "mcp" needs a subcommand (stdio or serve)`,
		"secrets":      `notebridge: "secrets" needs a subcommand (init or show)`,
	} {
		stdout, stderr, code := runCLI(t, strings.Fields(args)...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, want+"\n") || !strings.Contains(stderr, "Usage:") {
			t.Errorf("%s: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, stderr, code := runCLI(t); code != 2 || strings.Contains(stderr, "unknown command") || !strings.Contains(stderr, "Usage:") {
		t.Errorf("no command: exit %d, stderr %q", code, stderr)
	}
}

// TestFlagErrorIsPrintedOnce: the flag package prints a parse error with
// the command's flags; the command must not print it a second time.
func TestFlagErrorIsPrintedOnce(t *testing.T) {
	for _, c := range []struct{ args, msg string }{
		{"serve --bogus", "flag provided but not defined: -bogus"},
		{"mcp stdio --joplin-wait soon", `invalid value "soon" for flag -joplin-wait`},
		{"openapi --nope", "flag provided but not defined: -nope"},
		{"secrets init --dir", "flag needs an argument: -dir"},
		{"journal --x", "flag provided but not defined: -x"},
	} {
		_, stderr, code := runCLI(t, strings.Fields(c.args)...)
		if code != 2 || strings.Count(stderr, c.msg) != 1 || !strings.Contains(stderr, "Usage of ") {
			t.Errorf("%s: exit %d, %d copies of %q in:\n%s", c.args, code, strings.Count(stderr, c.msg), c.msg, stderr)
		}
	}
	if _, _, code := runCLI(t, "serve", "-h"); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
}

// TestJoplinTokenFileReportedAtStart: a Joplin token file that would fail
// every call, or that others can read, is reported at start with its path,
// never its contents; the bridge still starts.
func TestJoplinTokenFileReportedAtStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	const secret = "joplin-secret-token-value-0123"
	cases := []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "absent"), "cannot be read (no such file or directory)"},
		{"unreadable", dir, "cannot be read"},
		{"empty", write("empty", "\n", 0o600), "is empty"},
		{"world-readable", write("shared", secret, 0o644), "must not be readable by group or others (mode 0644; use chmod 600)"},
		{"group-readable", write("group", secret, 0o640), "must not be readable by group or others (mode 0640"},
		{"unset", "", "no Joplin token file is configured"},
	}
	for _, c := range cases {
		stdout, stderr, code := runStdioSession(t, initialize(1, "2025-06-18")+"\n", "--joplin-token-file="+c.path)
		if code != 0 || !strings.Contains(stdout, `"id":1`) {
			t.Errorf("%s: the bridge must still start: exit %d, %s", c.name, code, stderr)
		}
		if !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, c.want) || (c.path != "" && !strings.Contains(stderr, c.path)) {
			t.Errorf("%s: stderr must warn %q naming %q:\n%s", c.name, c.want, c.path, stderr)
		}
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("%s: the token leaked:\n%s", c.name, stderr)
		}
	}
	if _, stderr, _ := runStdioSession(t, initialize(1, "2025-06-18")+"\n"); strings.Contains(stderr, "level=WARN") {
		t.Errorf("a private token file must not be warned about:\n%s", stderr)
	}
}

// TestUnreachableJoplinNamesTheURL: joplin_status and the start-up log of
// serve name the Joplin URL that was tried, never the token.
func TestUnreachableJoplinNamesTheURL(t *testing.T) {
	const url = "http://127.0.0.1:1"
	stdout, stderr, _ := runStdioSession(t, initialize(1, "2025-06-18")+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"joplin_status","arguments":{}}}`+"\n")
	if r := string(parseLines(t, stdout)["2"].Result); !strings.Contains(r, `"reachable":false`) || !strings.Contains(r, "(Joplin URL "+url+")") {
		t.Errorf("joplin_status must name the URL: %s", r)
	}
	if strings.Contains(stdout+stderr, "joplin-secret-token-value") || strings.Contains(stdout+stderr, "token=") {
		t.Errorf("the token leaked: %s %s", stdout, stderr)
	}

	token := tokenFileWith(t, "joplin-serve-secret-0123456789", 0o600)
	p := startServeEnv(t, nil, "--joplin-url", url, "--joplin-wait", "0s", "--joplin-token-file", token)
	if p.exited {
		t.Fatalf("serve exited: %s", p.log.String())
	}
	line, ok := p.log.waitFor(t, func(l string) bool { return strings.Contains(l, "Joplin does not answer") })
	if !ok || !strings.Contains(line, "url="+url) || !strings.Contains(line, "level=WARN") {
		t.Fatalf("start-up log must name the Joplin URL: %q\n%s", line, p.log.String())
	}
	if strings.Contains(p.log.String(), "joplin-serve-secret") {
		t.Fatalf("the token leaked: %s", p.log.String())
	}
}
