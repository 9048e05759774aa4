package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMCPServeStartsWithJoplinDown starts the real binary with Joplin
// unreachable and no token file: it must bind, generate a private token
// file, print only its path, and answer initialize and tools/list.
func TestMCPServeStartsWithJoplinDown(t *testing.T) {
	state := t.TempDir()
	joplinToken := filepath.Join(t.TempDir(), "joplin-token")
	os.WriteFile(joplinToken, []byte("joplin-token-value-0123456789"), 0o600)
	cmd := exec.Command(binPath, "mcp", "serve", "--listen", "127.0.0.1:0", "--state-dir", state,
		"--joplin-url", "http://127.0.0.1:1", "--joplin-wait", "0s", "--joplin-token-file", joplinToken)
	cmd.Env = cleanEnv("HOME=" + t.TempDir())
	stderr, _ := cmd.StderrPipe()
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	addrRe := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	log := readLog(stderr)
	line, ok := log.waitFor(t, addrRe.MatchString)
	if !ok {
		t.Fatalf("serve exited: %s", log.String())
	}
	addr, logged := addrRe.FindStringSubmatch(line)[1], log.String()
	tokenPath := filepath.Join(state, "mcp-token")
	fi, err := os.Stat(tokenPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	tok, _ := os.ReadFile(tokenPath)
	if !strings.Contains(logged, tokenPath) || strings.Contains(logged, strings.TrimSpace(string(tok))) {
		t.Fatalf("stderr must name the token file and never the token: %s", logged)
	}
	auth := "Bearer " + strings.TrimSpace(string(tok))
	do := func(body string, h map[string]string) (int, http.Header, string) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	code, hdr, body := do(initialize(1, "2025-06-18"), nil)
	if code != 200 {
		t.Fatalf("initialize: %d %s", code, body)
	}
	session := hdr.Get("Mcp-Session-Id")
	h := map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
	do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	if code, _, body := do(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h); code != 200 || !strings.Contains(body, "create_note") {
		t.Fatalf("tools/list: %d %s", code, body)
	}
	if code, _, body := do(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}`, h); code != 200 || !strings.Contains(body, "JOPLIN_UNAVAILABLE") {
		t.Fatalf("call with Joplin down: %d %s", code, body)
	}
	r, err := http.Get("http://" + addr + "/readyz")
	if err != nil || r.StatusCode != 503 {
		t.Fatalf("readyz with Joplin down: %v %v", r, err)
	}
	r.Body.Close()
	if stdout.Len() != 0 {
		t.Fatalf("serve wrote to stdout: %q", stdout.String())
	}
}
