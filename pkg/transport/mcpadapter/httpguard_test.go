package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/core/registry"
)

const otherToken = "fedcba9876543210fedcba9876543210"

// rpcErrorOf decodes a JSON-RPC error body.
func rpcErrorOf(t *testing.T, body string) (code int, msg, dataCode, limit string) {
	t.Helper()
	var r struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Code    string `json:"code"`
				Details struct {
					Limit string `json:"limit"`
				} `json:"details"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("not a JSON-RPC error: %q", body)
	}
	return r.Error.Code, r.Error.Message, r.Error.Data.Code, r.Error.Data.Details.Limit
}

// initSession runs initialize with token and returns the session id; the
// HTTP status is checked by the caller through the returned response.
func initSession(t *testing.T, url, token string) (*http.Response, string, string) {
	t.Helper()
	resp, body := post(t, url+Path, initBody("2025-06-18"), map[string]string{"Authorization": "Bearer " + token})
	sid := resp.Header.Get(server.HeaderKeySessionID)
	if resp.StatusCode == 200 {
		post(t, url+Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(token, sid))
	}
	return resp, body, sid
}

func sessionHeaders(token, sid string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token, server.HeaderKeySessionID: sid, "MCP-Protocol-Version": "2025-06-18"}
}

// send issues method on /mcp with headers and returns the response with
// its body unread.
func send(t *testing.T, method, url string, headers map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url+Path, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(r *http.Response) string {
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

const toolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// TestHTTPSessionHeaderRules: after initialize, a request without
// Mcp-Session-Id gets 400 and one with an unknown, ended or other
// credential's session gets 404, each with a JSON-RPC error (Streamable
// HTTP, "Session Management").
func TestHTTPSessionHeaderRules(t *testing.T) {
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{})
	url := h.srv.URL
	_, _, sid := initSession(t, url, testToken)
	auth := map[string]string{"Authorization": "Bearer " + testToken}

	resp, body := post(t, url+Path, toolsList, auth)
	if code, msg, _, _ := rpcErrorOf(t, body); resp.StatusCode != 400 || code != -32000 || !strings.Contains(msg, "Mcp-Session-Id header is required") || !strings.Contains(body, `"id":2`) {
		t.Errorf("POST without a session: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, url+Path, `not json`, auth); resp.StatusCode != 400 || !strings.Contains(body, "-32700") {
		t.Errorf("POST of a body that is not JSON: %d %s", resp.StatusCode, body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if resp := send(t, m, url, auth); resp.StatusCode != 400 {
			t.Errorf("%s without a session: %d %s", m, resp.StatusCode, readAll(resp))
		} else {
			resp.Body.Close()
		}
	}
	resp, body = post(t, url+Path, toolsList, sessionHeaders(testToken, "0123456789abcdef0123456789abcdef"))
	if code, msg, _, _ := rpcErrorOf(t, body); resp.StatusCode != 404 || code != -32001 || msg != "Session not found" {
		t.Errorf("unknown session: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, url+Path, toolsList, sessionHeaders(testToken, sid)); resp.StatusCode != 200 || !strings.Contains(body, "echo_text") {
		t.Fatalf("live session: %d %s", resp.StatusCode, body)
	}
	// A session is bound to the credential that created it.
	if err := os.WriteFile(h.tokenPath, []byte(otherToken), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, body := post(t, url+Path, toolsList, sessionHeaders(otherToken, sid)); resp.StatusCode != 404 {
		t.Errorf("another credential's session: %d %s", resp.StatusCode, body)
	}
	_, _, sid2 := initSession(t, url, otherToken)
	if resp := send(t, http.MethodDelete, url, sessionHeaders(otherToken, sid2)); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, readAll(resp))
	} else {
		resp.Body.Close()
	}
	if resp, body := post(t, url+Path, toolsList, sessionHeaders(otherToken, sid2)); resp.StatusCode != 404 {
		t.Errorf("ended session: %d %s", resp.StatusCode, body)
	}
}

// TestBatchIsRejectedClearly: a JSON-RPC batch gets -32600 "batches are
// not supported", not a parse error, over HTTP and over stdio.
func TestBatchIsRejectedClearly(t *testing.T) {
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{})
	_, _, sid := initSession(t, h.srv.URL, testToken)
	batch := ` [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	resp, body := post(t, h.srv.URL+Path, batch, sessionHeaders(testToken, sid))
	if code, msg, _, _ := rpcErrorOf(t, body); resp.StatusCode != 400 || code != -32600 || msg != batchError {
		t.Errorf("HTTP batch: %d %s", resp.StatusCode, body)
	}
	var out bytes.Buffer
	err := ServeStdio(context.Background(), NewServer(testExecutor(t), registry.MCPStdio, "t"), strings.NewReader(batch+"\n"), &out, 1<<20, slog.New(slog.DiscardHandler))
	if code, msg, _, _ := rpcErrorOf(t, out.String()); err != nil || code != -32600 || msg != batchError {
		t.Errorf("stdio batch: %q %v", out.String(), err)
	}
}

// TestOverDeepJSONSaysNestingTooDeep: a message nested deeper than JSON
// decoding allows gets NESTING_TOO_DEEP, as Actions answers it, not "not
// valid json", over HTTP and over stdio.
func TestOverDeepJSONSaysNestingTooDeep(t *testing.T) {
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{})
	_, _, sid := initSession(t, h.srv.URL, testToken)
	deep := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`
	resp, body := post(t, h.srv.URL+Path, deep, sessionHeaders(testToken, sid))
	if code, msg, dc, _ := rpcErrorOf(t, body); resp.StatusCode != 400 || code != -32600 || dc != "NESTING_TOO_DEEP" || !strings.HasPrefix(msg, "NESTING_TOO_DEEP: ") {
		t.Errorf("HTTP: %d %s", resp.StatusCode, body)
	}
	var out bytes.Buffer
	err := ServeStdio(context.Background(), NewServer(testExecutor(t), registry.MCPStdio, "t"), strings.NewReader(deep+"\n"), &out, 1<<20, slog.New(slog.DiscardHandler))
	if code, msg, _, _ := rpcErrorOf(t, out.String()); err != nil || code != -32600 || !strings.HasPrefix(msg, "NESTING_TOO_DEEP: ") {
		t.Errorf("stdio: %q %v", out.String(), err)
	}
	// Invalid JSON is still a parse error.
	resp, body = post(t, h.srv.URL+Path, `{"jsonrpc":[[[`, sessionHeaders(testToken, sid))
	if code, _, _, _ := rpcErrorOf(t, body); code != -32700 {
		t.Errorf("invalid JSON: %d %s", resp.StatusCode, body)
	}
}

// TestHTTPSessionLimits: initialize beyond the per-credential bound gets
// 429 and beyond the total bound 503, with a SESSION_LIMIT JSON-RPC
// error; an ended session frees its slot.
func TestHTTPSessionLimits(t *testing.T) {
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{MaxSessionsPerCredential: 2, MaxSessions: 3})
	url := h.srv.URL
	_, _, a1 := initSession(t, url, testToken)
	if resp, body, _ := initSession(t, url, testToken); resp.StatusCode != 200 {
		t.Fatalf("second session: %d %s", resp.StatusCode, body)
	}
	resp, body, _ := initSession(t, url, testToken)
	if code, _, dc, limit := rpcErrorOf(t, body); resp.StatusCode != 429 || code != -32000 || dc != "SESSION_LIMIT" || limit != "sessions_per_credential" || !strings.Contains(body, `"id":1`) {
		t.Errorf("third session of one credential: %d %s", resp.StatusCode, body)
	}
	if resp := send(t, http.MethodDelete, url, sessionHeaders(testToken, a1)); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if resp, body, _ := initSession(t, url, testToken); resp.StatusCode != 200 {
		t.Fatalf("session after a DELETE freed a slot: %d %s", resp.StatusCode, body)
	}
	if err := os.WriteFile(h.tokenPath, []byte(otherToken), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, body, _ := initSession(t, url, otherToken); resp.StatusCode != 200 {
		t.Fatalf("another credential's first session: %d %s", resp.StatusCode, body)
	}
	resp, body, _ = initSession(t, url, otherToken)
	if _, _, dc, limit := rpcErrorOf(t, body); resp.StatusCode != 503 || dc != "SESSION_LIMIT" || limit != "sessions_total" {
		t.Errorf("session beyond the total: %d %s", resp.StatusCode, body)
	}
}

// TestHTTPIdleSessionsExpire: a session idle for the TTL ends (404), its
// slot is free again, and mcp-go no longer holds it.
func TestHTTPIdleSessionsExpire(t *testing.T) {
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{SessionIdleTTL: time.Hour, MaxSessionsPerCredential: 1})
	url := h.srv.URL
	_, _, sid := initSession(t, url, testToken)
	h.guard.sessions.sweepExpired(time.Now().Add(59 * time.Minute))
	if resp, body := post(t, url+Path, toolsList, sessionHeaders(testToken, sid)); resp.StatusCode != 200 {
		t.Fatalf("session before its TTL: %d %s", resp.StatusCode, body)
	}
	if err := h.mcp.SendNotificationToSpecificClient(sid, "notifications/message", nil); errors.Is(err, server.ErrSessionNotFound) {
		t.Fatal("mcp-go does not know the live session")
	}
	h.guard.sessions.sweepExpired(time.Now().Add(61 * time.Minute))
	if resp, body := post(t, url+Path, toolsList, sessionHeaders(testToken, sid)); resp.StatusCode != 404 {
		t.Errorf("expired session: %d %s", resp.StatusCode, body)
	}
	if err := h.mcp.SendNotificationToSpecificClient(sid, "notifications/message", nil); !errors.Is(err, server.ErrSessionNotFound) {
		t.Errorf("mcp-go still holds the expired session: %v", err)
	}
	if n := h.guard.sessions.live(); n != 0 {
		t.Errorf("%d sessions live after expiry", n)
	}
	if resp, body, _ := initSession(t, url, testToken); resp.StatusCode != 200 {
		t.Errorf("new session after expiry: %d %s", resp.StatusCode, body)
	}
}

// TestHTTPStreamBounds: GET streams are bounded per credential (429
// beyond), end with their session, and close once idle.
func TestHTTPStreamBounds(t *testing.T) {
	h := newGuardedHTTP(t, testExecutor(t), HTTPConfig{MaxStreamsPerCredential: 2, StreamIdleTimeout: time.Hour})
	url := h.srv.URL
	_, _, s1 := initSession(t, url, testToken)
	_, _, s2 := initSession(t, url, testToken)
	var open []*http.Response
	for range 2 {
		resp := send(t, http.MethodGet, url, sessionHeaders(testToken, s1))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("stream: %d %s", resp.StatusCode, readAll(resp))
		}
		open = append(open, resp)
	}
	resp := send(t, http.MethodGet, url, sessionHeaders(testToken, s2))
	body := readAll(resp)
	if _, _, dc, limit := rpcErrorOf(t, body); resp.StatusCode != 429 || dc != "SESSION_LIMIT" || limit != "streams_per_credential" {
		t.Errorf("third stream: %d %s", resp.StatusCode, body)
	}
	// Ending the session closes its streams and frees their slots.
	send(t, http.MethodDelete, url, sessionHeaders(testToken, s1)).Body.Close()
	for _, r := range open {
		readAll(r) // returns at the end of the stream; the client timeout guards a hang
	}
	resp = send(t, http.MethodGet, url, sessionHeaders(testToken, s2))
	if resp.StatusCode != 200 {
		t.Fatalf("stream after others ended: %d %s", resp.StatusCode, readAll(resp))
	}
	resp.Body.Close()

	idle := newGuardedHTTP(t, testExecutor(t), HTTPConfig{StreamIdleTimeout: 200 * time.Millisecond})
	_, _, s3 := initSession(t, idle.srv.URL, testToken)
	resp = send(t, http.MethodGet, idle.srv.URL, sessionHeaders(testToken, s3))
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Errorf("an idle stream was not closed by the server: %v", err)
	}
	resp.Body.Close()
}

// TestHTTPCancelledRequestGetsNoResponse: a notifications/cancelled posted
// in the same session aborts the running call, whose POST then ends
// without a JSON-RPC response; the session keeps working.
func TestHTTPCancelledRequestGetsNoResponse(t *testing.T) {
	ex, started, aborted := waitExecutor(t, registry.MCPHTTP)
	h := newGuardedHTTP(t, ex, HTTPConfig{})
	_, _, sid := initSession(t, h.srv.URL, testToken)
	type answer struct {
		status int
		body   string
	}
	answered := make(chan answer, 1)
	go func() {
		resp, body := post(t, h.srv.URL+Path, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","arguments":{}}}`, sessionHeaders(testToken, sid))
		answered <- answer{resp.StatusCode, body}
	}()
	<-started
	if resp, body := post(t, h.srv.URL+Path, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`, sessionHeaders(testToken, sid)); resp.StatusCode != 202 {
		t.Fatalf("cancellation: %d %s", resp.StatusCode, body)
	}
	<-aborted
	if a := <-answered; a.status != 200 || strings.TrimSpace(a.body) != "" {
		t.Errorf("cancelled call answered: %d %q, want an empty stream", a.status, a.body)
	}
	if resp, body := post(t, h.srv.URL+Path, `{"jsonrpc":"2.0","id":6,"method":"ping"}`, sessionHeaders(testToken, sid)); resp.StatusCode != 200 || !strings.Contains(body, `"id":6`) {
		t.Errorf("ping after the cancellation: %d %s", resp.StatusCode, body)
	}
}
