//go:build integration

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCaddy runs the repository's Caddyfile with a real Caddy in front of
// the given upstreams and returns an HTTPS client trusting Caddy's
// internal CA, and the base URL.
func startCaddy(t *testing.T, root, actionsUp, mcpUp, publishMCP string) (*http.Client, string) {
	t.Helper()
	caddy, err := exec.LookPath("caddy")
	if err != nil {
		t.Fatal("caddy is not installed (apt-get install caddy)")
	}
	dir := t.TempDir()
	httpsPort, httpPort := freePort(t), freePort(t)
	cmd := exec.Command(caddy, "run", "--config", filepath.Join(root, "Caddyfile"), "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "HOME="+dir,
		"NOTEBRIDGE_DOMAIN=localhost", "NOTEBRIDGE_PUBLISH_MCP="+publishMCP,
		"NOTEBRIDGE_ACTIONS_UPSTREAM="+actionsUp, "NOTEBRIDGE_MCP_UPSTREAM="+mcpUp,
		"NOTEBRIDGE_CADDY_HTTPS_PORT="+strconv.Itoa(httpsPort), "NOTEBRIDGE_CADDY_HTTP_PORT="+strconv.Itoa(httpPort),
		"NOTEBRIDGE_TUNNEL_PORT="+strconv.Itoa(freePort(t)))
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rootCert := filepath.Join(dir, "data", "caddy", "pki", "authorities", "local", "root.crt")
	base := "https://localhost:" + strconv.Itoa(httpsPort)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not come up:\n%s", logs.String())
		}
		pem, err := os.ReadFile(rootCert)
		if err != nil {
			continue
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+strconv.Itoa(httpsPort))
			},
		}}
		if resp, err := c.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			return c, base
		}
	}
}

func do(t *testing.T, c *http.Client, method, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestCaddyInFrontOfServeAndRealJoplin runs the deployment path on this
// machine: real Joplin (container), `notebridge serve`, and a real Caddy
// with the repository's Caddyfile over HTTPS (internal CA).
func TestCaddyInFrontOfServeAndRealJoplin(t *testing.T) {
	root := mcptest.ModuleRoot(t)
	j := joplintc.Start(t, root)
	actionsTok, mcpTok := "caddy-actions-token-0123456789abcdef", "caddy-mcp-token-0123456789abcdef00"
	addrs, exited, stderr := startServeB(t, "--joplin-url", j.URL(), "--joplin-token-file", j.TokenFile,
		"--actions-enabled", "--actions-token-file", tokenFileB(t, actionsTok), "--mcp-token-file", tokenFileB(t, mcpTok))
	if exited {
		t.Fatalf("serve exited: %s", stderr)
	}
	c, base := startCaddy(t, root, addrs["GPT Actions"], addrs["MCP Streamable HTTP"], "on")

	resp, body := do(t, c, "POST", base+"/v1/joplin_status", actionsTok, `{}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"authenticated":true`) {
		t.Fatalf("Actions call through Caddy: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Strict-Transport-Security") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Server") != "" {
		t.Errorf("security headers: %v", resp.Header)
	}
	if resp, _ := do(t, c, "POST", base+"/v1/joplin_status", "", `{}`); resp.StatusCode != 401 {
		t.Errorf("Actions without a token through Caddy: %d", resp.StatusCode)
	}
	if resp, _ := do(t, c, "POST", base+"/v1/joplin_status", mcpTok, `{}`); resp.StatusCode != 401 {
		t.Errorf("MCP token on Actions through Caddy: %d", resp.StatusCode)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if resp, _ := do(t, c, "GET", base+p, "", ""); resp.StatusCode != 404 {
			t.Errorf("%s published through Caddy: %d", p, resp.StatusCode)
		}
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	if resp, body := do(t, c, "POST", base+"/mcp", mcpTok, init); resp.StatusCode != 200 || !strings.Contains(body, "2025-06-18") {
		t.Errorf("MCP through Caddy when enabled: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, c, "POST", base+"/mcp", "", init); resp.StatusCode != 401 {
		t.Errorf("MCP without a token through Caddy: %d", resp.StatusCode)
	}
	big := `{"x":"` + strings.Repeat("a", 17<<20) + `"}`
	if resp, body := do(t, c, "POST", base+"/v1/joplin_status", actionsTok, big); resp.StatusCode != 413 || strings.Contains(body, "127.0.0.1") {
		t.Errorf("oversized body through Caddy: %d %.200s", resp.StatusCode, body)
	}

	off, offBase := startCaddy(t, root, addrs["GPT Actions"], addrs["MCP Streamable HTTP"], "off")
	if resp, _ := do(t, off, "POST", offBase+"/mcp", mcpTok, init); resp.StatusCode != 404 {
		t.Errorf("MCP published while disabled: %d", resp.StatusCode)
	}
	// Its OAuth routes neither: Caddy's own 404, not the Actions upstream.
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server", "/oauth/authorize", "/oauth/token"} {
		if resp, body := do(t, off, "GET", offBase+p, "", ""); resp.StatusCode != 404 || !strings.Contains(body, `"NOT_FOUND"`) {
			t.Errorf("%s published while MCP is disabled: %d %s", p, resp.StatusCode, body)
		}
	}
	// With the bridge gone, Caddy's error names no upstream.
	down, downBase := startCaddy(t, root, "127.0.0.1:1", "127.0.0.1:1", "off")
	if resp, body := do(t, down, "POST", downBase+"/v1/joplin_status", actionsTok, `{}`); resp.StatusCode != 502 || strings.Contains(body, "127.0.0.1") || strings.Contains(body, "dial") {
		t.Errorf("upstream down: %d %s", resp.StatusCode, body)
	}
}
