package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func tokenFileWith(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
	return p
}

// servePID is the process id of the last serve started.
var servePID int

func startServe(t *testing.T, args ...string) (addrs map[string]string, exited bool, stderr string) {
	t.Helper()
	return startServeB(t, append([]string{"--joplin-url", "http://127.0.0.1:1", "--joplin-wait", "0s"}, args...)...)
}

// tokenFileB writes a private token file.
func tokenFileB(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startServeB runs `notebridge serve` and returns the MCP and Actions
// addresses it logged, or its stderr when it exited. Later flags win.
func startServeB(t testing.TB, args ...string) (addrs map[string]string, exited bool, stderr string) {
	t.Helper()
	p := startServeEnv(t, nil, args...)
	return p.addrs, p.exited, p.log.String()
}

// serveProc is a started `notebridge serve`.
type serveProc struct {
	addrs  map[string]string // by surface: "MCP Streamable HTTP", "GPT Actions"
	exited bool              // it exited during start-up
	log    *procLog          // its stderr, read to the end
}

// startServeEnv runs `notebridge serve` with env added to a clean
// environment and waits until it logged its listeners or exited.
func startServeEnv(t testing.TB, env []string, args ...string) *serveProc {
	t.Helper()
	base := []string{"serve", "--listen", "127.0.0.1:0", "--actions-listen", "127.0.0.1:0", "--state-dir", t.TempDir()}
	cmd := exec.Command(binPath, append(base, args...)...)
	cmd.Env = cleanEnv(env...)
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	servePID = cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	p := &serveProc{addrs: map[string]string{}, log: readLog(pipe)}
	re := regexp.MustCompile(`msg="serving (MCP Streamable HTTP|GPT Actions)" addr=(\S+)`)
	_, started := p.log.waitFor(t, func(l string) bool {
		if m := re.FindStringSubmatch(l); m != nil {
			p.addrs[m[1]] = m[2]
		}
		return strings.Contains(l, "GPT Actions are disabled") || p.addrs["GPT Actions"] != ""
	})
	p.exited = !started
	return p
}

func TestServeRefusesUnsafeActionsConfig(t *testing.T) {
	actionsTok := tokenFileWith(t, "actions-secret-0123456789abcdef", 0o600)
	cases := map[string][]string{
		"enabled without token file": {"--actions-enabled"},
		"token file without enabled": {"--actions-token-file", actionsTok},
		"world-readable token file":  {"--actions-enabled", "--actions-token-file", tokenFileWith(t, "actions-secret-0123456789abcdef", 0o644)},
		"same file as MCP":           {"--actions-enabled", "--actions-token-file", actionsTok, "--mcp-token-file", actionsTok},
		"same token as MCP":          {"--actions-enabled", "--actions-token-file", actionsTok, "--mcp-token-file", tokenFileWith(t, "actions-secret-0123456789abcdef\n", 0o600)},
		"bad origin":                 {"--actions-enabled", "--actions-token-file", actionsTok, "--actions-origin", "http://localhost"},
	}
	for name, args := range cases {
		_, exited, stderr := startServe(t, args...)
		if !exited || !strings.Contains(stderr, "notebridge:") || strings.Contains(stderr, "actions-secret") {
			t.Errorf("%s: exited=%v stderr=%s", name, exited, stderr)
		}
	}
}

func TestServeActionsAndMCPCredentialsAreIndependent(t *testing.T) {
	actionsTok, mcpTok := "actions-secret-0123456789abcdef", "mcp-secret-0123456789abcdef0000"
	addrs, exited, stderr := startServe(t, "--actions-enabled", "--actions-token-file", tokenFileWith(t, actionsTok, 0o600),
		"--mcp-token-file", tokenFileWith(t, mcpTok, 0o600), "--actions-origin", "https://notes.example.com")
	if exited {
		t.Fatalf("serve exited: %s", stderr)
	}
	post := func(url, tok, body string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	actionsURL, mcpURL := "http://"+addrs["GPT Actions"], "http://"+addrs["MCP Streamable HTTP"]
	if code := post(actionsURL+"/v1/joplin_status", mcpTok, `{}`); code != 401 {
		t.Errorf("MCP token on Actions: %d", code)
	}
	if code := post(mcpURL+"/mcp", actionsTok, initialize(1, "2025-06-18")); code != 401 {
		t.Errorf("Actions token on MCP: %d", code)
	}
	if code := post(actionsURL+"/v1/joplin_status", actionsTok, `{}`); code != 200 {
		t.Errorf("Actions call: %d", code)
	}
	if code := post(mcpURL+"/mcp", mcpTok, initialize(1, "2025-06-18")); code != 200 {
		t.Errorf("MCP call: %d", code)
	}
	req, _ := http.NewRequest("GET", actionsURL+"/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+actionsTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("served document: %v %v", resp, err)
	}
	resp.Body.Close()
	for _, p := range []string{"/healthz", "/readyz"} {
		if code := post(actionsURL+p, "", ""); code != 401 {
			t.Errorf("Actions port serves %s without auth: %d", p, code)
		}
	}
}

func TestOpenAPICommandIsDeterministicAcrossProcesses(t *testing.T) {
	run := func(origin string) ([]byte, error) {
		return exec.Command(binPath, "openapi", "--origin", origin).Output()
	}
	a, err := run("https://notes.example.com")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := run("https://notes.example.com")
	if !bytes.Equal(a, b) || !bytes.Contains(a, []byte(`"openapi": "3.1.0"`)) {
		t.Fatal("openapi output differs between processes")
	}
	for _, bad := range []string{"http://notes.example.com", "https://localhost", "https://10.0.0.1", "https://notes.example.com:8443"} {
		if _, err := run(bad); err == nil {
			t.Errorf("origin %s accepted", bad)
		}
	}
}

// TestServeOpenAPIOriginFollowsDomain: the served document's origin is
// https://NOTEBRIDGE_DOMAIN unless NOTEBRIDGE_ORIGIN or --actions-origin
// overrides it; a local or missing domain serves PUBLIC_DOMAIN_REQUIRED
// (and says so at start) instead of a document for someone else's host.
func TestServeOpenAPIOriginFollowsDomain(t *testing.T) {
	actionsTok := "actions-secret-0123456789abcdef"
	tokFile := tokenFileWith(t, actionsTok, 0o600)
	cases := []struct {
		name   string
		env    []string
		flags  []string
		origin string // "" when no document is served
	}{
		{"domain", []string{"NOTEBRIDGE_DOMAIN=notes.example.org"}, nil, "https://notes.example.org"},
		{"origin overrides domain", []string{"NOTEBRIDGE_DOMAIN=notes.example.org", "NOTEBRIDGE_ORIGIN=https://api.example.net"}, nil, "https://api.example.net"},
		{"flag overrides both", []string{"NOTEBRIDGE_DOMAIN=notes.example.org", "NOTEBRIDGE_ORIGIN=https://api.example.net"},
			[]string{"--actions-origin", "https://flag.example.com"}, "https://flag.example.com"},
		{"localhost", []string{"NOTEBRIDGE_DOMAIN=localhost"}, nil, ""},
		{"loopback address", []string{"NOTEBRIDGE_DOMAIN=127.0.0.1"}, nil, ""},
		{"no domain", nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startServeEnv(t, c.env, append([]string{"--joplin-url", "http://127.0.0.1:1", "--joplin-wait", "0s",
				"--actions-enabled", "--actions-token-file", tokFile}, c.flags...)...)
			if p.exited {
				t.Fatalf("serve exited: %s", p.log.String())
			}
			req, _ := http.NewRequest("GET", "http://"+p.addrs["GPT Actions"]+"/openapi.json", nil)
			req.Header.Set("Authorization", "Bearer "+actionsTok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var doc struct {
				Servers []struct{ URL string }
				Error   struct{ Code, Message string }
			}
			json.Unmarshal(body, &doc)
			if c.origin != "" {
				if resp.StatusCode != 200 || len(doc.Servers) != 1 || doc.Servers[0].URL != c.origin {
					t.Fatalf("want a document for %s: %d %.300s", c.origin, resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != 404 || doc.Error.Code != "PUBLIC_DOMAIN_REQUIRED" || !strings.Contains(doc.Error.Message, "NOTEBRIDGE_DOMAIN") {
				t.Fatalf("want PUBLIC_DOMAIN_REQUIRED: %d %.300s", resp.StatusCode, body)
			}
			if !strings.Contains(p.log.String(), "GPT Actions need a public domain") {
				t.Fatalf("start-up log does not say why no document is served: %s", p.log.String())
			}
		})
	}
	t.Run("invalid explicit origin refuses to start", func(t *testing.T) {
		p := startServeEnv(t, []string{"NOTEBRIDGE_DOMAIN=notes.example.org", "NOTEBRIDGE_ORIGIN=http://notes.example.org"},
			"--joplin-url", "http://127.0.0.1:1", "--actions-enabled", "--actions-token-file", tokFile)
		if !p.exited || !strings.Contains(p.log.String(), "NOTEBRIDGE_ORIGIN: origin must use https") {
			t.Fatalf("exited=%v: %s", p.exited, p.log.String())
		}
	})
}

// TestOpenAPICommandFollowsDomain: without --origin the command uses
// https://NOTEBRIDGE_DOMAIN, and refuses a local domain with the reason.
func TestOpenAPICommandFollowsDomain(t *testing.T) {
	run := func(env string, args ...string) (string, string, int) {
		cmd := exec.Command(binPath, append([]string{"openapi"}, args...)...)
		cmd.Env = cleanEnv(strings.Fields(env)...)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		cmd.Run()
		return so.String(), se.String(), cmd.ProcessState.ExitCode()
	}
	if out, errOut, code := run("NOTEBRIDGE_DOMAIN=notes.example.org"); code != 0 || !strings.Contains(out, `"url": "https://notes.example.org"`) {
		t.Errorf("domain: %d %s %.200s", code, errOut, out)
	}
	if out, _, code := run("NOTEBRIDGE_DOMAIN=notes.example.org", "--origin", "https://api.example.net"); code != 0 || !strings.Contains(out, `"url": "https://api.example.net"`) {
		t.Errorf("--origin must win: %d %.200s", code, out)
	}
	if out, errOut, code := run("NOTEBRIDGE_DOMAIN=localhost"); code != 1 || out != "" || !strings.Contains(errOut, "GPT Actions need a public domain") {
		t.Errorf("localhost: %d %q %s", code, out, errOut)
	}
	if _, errOut, code := run(""); code != 1 || !strings.Contains(errOut, "--origin is required") {
		t.Errorf("neither: %d %s", code, errOut)
	}
}
