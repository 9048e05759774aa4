package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

const testToken = "0123456789abcdef0123456789abcdef"

func testExecutor(t testing.TB) *executor.Executor {
	t.Helper()
	in := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":100}},"required":["text"],"additionalProperties":false}`)
	out := json.RawMessage(`{"type":"object","properties":{"echo":{"type":"string","maxLength":100}},"required":["echo"],"additionalProperties":false}`)
	reg, err := registry.New(registry.Operation{
		Name: "echo_text", Title: "Echo", Description: "Echo text.", Toolset: "test",
		InputSchema: in, OutputSchema: out, Effect: registry.EffectRead,
		Exposure: []registry.Transport{registry.MCPStdio, registry.MCPHTTP},
		Handler: registry.Typed(func(_ context.Context, in struct {
			Text string `json:"text"`
		}) (any, error) {
			return map[string]string{"echo": in.Text}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// waitExecutor serves one read operation, "wait", exposed on tr: its
// handler signals started, blocks until its context ends, then signals
// aborted and returns the context's error.
func waitExecutor(t testing.TB, tr registry.Transport) (ex *executor.Executor, started, aborted chan struct{}) {
	t.Helper()
	started, aborted = make(chan struct{}, 1), make(chan struct{}, 1)
	reg, err := registry.New(registry.Operation{
		Name: "wait", Title: "Wait", Description: "Wait.", Toolset: "test", Effect: registry.EffectRead,
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Exposure: []registry.Transport{tr},
		Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			aborted <- struct{}{}
			return nil, ctx.Err()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ex, err = executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return ex, started, aborted
}

func newTestHTTP(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{AllowedOrigins: []string{"https://app.example.com"}, MaxBodyBytes: 4096})
	return h.srv, h.tokenPath
}

// testHTTP is an MCP HTTP endpoint under test.
type testHTTP struct {
	srv       *httptest.Server
	tokenPath string
	guard     *guard
	mcp       *server.MCPServer // the mcp-go server under s
}

// newGuardedHTTP serves ex over MCP HTTP with cfg and a fresh token file
// holding testToken.
func newGuardedHTTP(t *testing.T, ex *executor.Executor, cfg HTTPConfig) testHTTP {
	t.Helper()
	tokenPath := filepath.Join(t.TempDir(), "mcp-token")
	if err := os.WriteFile(tokenPath, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := bearer.NewTokenFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Token = tf
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	s := NewServer(ex, registry.MCPHTTP, "test")
	e, g, err := newHTTPHandler(s, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return testHTTP{srv: srv, tokenPath: tokenPath, guard: g, mcp: s.mcp}
}

func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func initBody(v string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, v)
}

func TestHTTPAuthAndRotation(t *testing.T) {
	srv, tokenPath := newTestHTTP(t)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	if resp, body := post(t, srv.URL+Path, initBody("2025-06-18"), nil); resp.StatusCode != 401 || strings.Contains(body, testToken) {
		t.Fatalf("no token: %d %s", resp.StatusCode, body)
	}
	if resp, _ := post(t, srv.URL+Path, initBody("2025-06-18"), map[string]string{"Authorization": "Bearer fedcba9876543210fedcba9876543210"}); resp.StatusCode != 401 {
		t.Fatalf("wrong token: %d", resp.StatusCode)
	}
	if resp, _ := post(t, srv.URL+"/no/such/path", "{}", nil); resp.StatusCode != 401 {
		t.Fatalf("unknown path without auth: %d, want 401", resp.StatusCode)
	}
	if resp, body := post(t, srv.URL+Path, initBody("2025-06-18"), auth); resp.StatusCode != 200 || !strings.Contains(body, `"2025-06-18"`) {
		t.Fatalf("valid token: %d %s", resp.StatusCode, body)
	}
	rotated := "fedcba9876543210fedcba9876543210"
	if err := os.WriteFile(tokenPath, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, _ := post(t, srv.URL+Path, initBody("2025-06-18"), auth); resp.StatusCode != 401 {
		t.Fatalf("old token after rotation: %d", resp.StatusCode)
	}
	if resp, _ := post(t, srv.URL+Path, initBody("2025-06-18"), map[string]string{"Authorization": "Bearer " + rotated}); resp.StatusCode != 200 {
		t.Fatalf("new token after rotation: %d", resp.StatusCode)
	}
}

func TestHTTPOriginProtocolAndSize(t *testing.T) {
	srv, _ := newTestHTTP(t)
	auth := "Bearer " + testToken
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
	}{
		{"evil origin", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, initBody("2025-06-18"), 403},
		{"allowed origin", map[string]string{"Authorization": auth, "Origin": "https://app.example.com"}, initBody("2025-06-18"), 200},
		{"loopback origin", map[string]string{"Authorization": auth, "Origin": "http://localhost:3000"}, initBody("2025-06-18"), 200},
		{"null origin", map[string]string{"Authorization": auth, "Origin": "null"}, initBody("2025-06-18"), 403},
		{"bad protocol header", map[string]string{"Authorization": auth, "MCP-Protocol-Version": "1999-01-01"},
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400},
		{"oversized body", map[string]string{"Authorization": auth}, `{"x":"` + strings.Repeat("a", 5000) + `"}`, 413},
	}
	for _, c := range cases {
		if resp, body := post(t, srv.URL+Path, c.body, c.headers); resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, resp.StatusCode, c.status, body)
		}
	}
	// A chunked oversized body (no Content-Length) gets the same 413.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+Path, io.MultiReader(strings.NewReader(`{"x":"`), strings.NewReader(strings.Repeat("a", 8000))))
	req.ContentLength = -1
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked oversized body: %d", resp.StatusCode)
	}
}

func TestHTTPEveryProtocolVersionAndToolCall(t *testing.T) {
	srv, _ := newTestHTTP(t)
	auth := "Bearer " + testToken
	for _, v := range mcp.ValidProtocolVersions {
		if mcp.IsModernProtocol(v) {
			continue
		}
		resp, body := post(t, srv.URL+Path, initBody(v), map[string]string{"Authorization": auth})
		if resp.StatusCode != 200 || !strings.Contains(body, `"protocolVersion":"`+v+`"`) {
			t.Errorf("initialize %s: %d %s", v, resp.StatusCode, body)
		}
	}
	resp, body := post(t, srv.URL+Path, initBody("1999-01-01"), map[string]string{"Authorization": auth})
	if resp.StatusCode != 200 || !strings.Contains(body, mcp.LATEST_LEGACY_PROTOCOL_VERSION) {
		t.Errorf("unknown version: %d %s", resp.StatusCode, body)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	h := map[string]string{"Authorization": auth, "Mcp-Session-Id": session, "MCP-Protocol-Version": mcp.LATEST_LEGACY_PROTOCOL_VERSION}
	post(t, srv.URL+Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	_, body = post(t, srv.URL+Path, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo_text","arguments":{"text":"hi"}}}`, h)
	if !strings.Contains(body, `"structuredContent":{"echo":"hi"}`) || !strings.Contains(body, `"text":"{\"echo\":\"hi\"}"`) {
		t.Errorf("tools/call: %s", body)
	}
	_, body = post(t, srv.URL+Path, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo_text","arguments":{"text":"hi","x":1}}}`, h)
	var rpc struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &rpc); err != nil || !rpc.Result.IsError || !strings.Contains(body, "INVALID_ARGUMENT") {
		t.Errorf("unknown argument key: %s", body)
	}
	// Modern (2026-07-28) stateless request without initialize.
	modern := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp, body = post(t, srv.URL+Path, modern, map[string]string{"Authorization": auth, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
	if resp.StatusCode != 200 || !strings.Contains(body, "echo_text") {
		t.Errorf("2026-07-28 tools/list: %d %s", resp.StatusCode, body)
	}
}

func TestHealthRoutesNeedNoToken(t *testing.T) {
	srv, _ := newTestHTTP(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
}

// TestReadyzNamesWhatIsDegraded: a part failing without failing calls
// (the activity log) leaves /readyz at 200, naming it, until it recovers.
func TestReadyzNamesWhatIsDegraded(t *testing.T) {
	var failing atomic.Bool
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{Degraded: func() []string {
		if failing.Load() {
			return []string{"activity_log"}
		}
		return nil
	}})
	get := func() (int, string) {
		resp, err := http.Get(h.srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != 200 || strings.Contains(body, "degraded") {
		t.Errorf("readyz when healthy: %d %s", code, body)
	}
	failing.Store(true)
	if code, body := get(); code != 200 || !strings.Contains(body, `"degraded":["activity_log"]`) {
		t.Errorf("readyz with the log failing: %d %s", code, body)
	}
}

// TestHealthzReportsAConfigurationError: /healthz answers 503 with the
// code while Health reports a configuration error, and 200 once it is
// fixed; /readyz does not depend on it.
func TestHealthzReportsAConfigurationError(t *testing.T) {
	var bad error = domainerr.New(domainerr.JoplinAuthFailed, "refused")
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{Health: func(context.Context) error { return bad }})
	get := func(p string) (int, string) {
		resp, err := http.Get(h.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 503 || !strings.Contains(body, `"code":"JOPLIN_AUTH_FAILED"`) {
		t.Errorf("healthz with a refused token: %d %s", code, body)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("readyz: %d", code)
	}
	bad = nil
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("healthz once fixed: %d", code)
	}
}
