package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	base := []string{"serve", "--listen", "127.0.0.1:0", "--actions-listen", "127.0.0.1:0", "--state-dir", t.TempDir()}
	cmd := exec.Command(binPath, append(base, args...)...)
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	servePID = cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	addrs = map[string]string{}
	re := regexp.MustCompile(`msg="serving (MCP Streamable HTTP|GPT Actions)" addr=(\S+)`)
	var all strings.Builder
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return addrs, true, all.String()
			}
			all.WriteString(l + "\n")
			if m := re.FindStringSubmatch(l); m != nil {
				addrs[m[1]] = m[2]
			}
			if strings.Contains(l, "GPT Actions are disabled") || addrs["GPT Actions"] != "" {
				return addrs, false, all.String()
			}
		case <-deadline:
			t.Fatalf("serve did not start: %s", all.String())
		}
	}
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
