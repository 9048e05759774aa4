package actions

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
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

const (
	actionsToken = "actions-token-0123456789abcdef"
	mcpToken     = "mcp-token-0123456789abcdef0000"
)

func writeToken(t *testing.T, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// blocker lets a test hold block_call inside its handler: the handler
// signals held once it runs (so it holds an Actions slot) and returns when
// release is closed.
type blocker struct {
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlocker() *blocker {
	return &blocker{held: make(chan struct{}, 1), release: make(chan struct{})}
}

// Release lets every held and future block_call return; idempotent.
func (b *blocker) Release() { b.once.Do(func() { close(b.release) }) }

// toyRegistry has one read and one write operation whose results can be
// made arbitrarily large, and one that blocks until released.
func toyRegistry(t *testing.T, b *blocker) *registry.Registry {
	t.Helper()
	in := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"size":{"type":"integer","minimum":0,"maximum":1000000,"description":"Result size."}}}`)
	out := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string","maxLength":32,"description":"Id."},"pad":{"type":"string","maxLength":2000000,"description":"Padding."}}}`)
	h := registry.Typed(func(_ context.Context, in struct {
		Size int `json:"size"`
	}) (any, error) {
		return map[string]string{"id": "0123456789abcdef0123456789abcdef", "pad": strings.Repeat("é", in.Size)}, nil
	})
	all := []registry.Transport{registry.Actions, registry.MCPStdio}
	reg, err := registry.New(
		registry.Operation{Name: "read_pad", Title: "Read", Description: "Read.", InputSchema: in, OutputSchema: out, Effect: registry.EffectRead, Exposure: all, Handler: h},
		registry.Operation{Name: "write_pad", Title: "Write", Description: "Write.", InputSchema: in, OutputSchema: out, Effect: registry.EffectCreate, Exposure: all, Handler: h},
		registry.Operation{Name: "block_call", Title: "Block", Description: "Block.", InputSchema: in, OutputSchema: out, Effect: registry.EffectRead, Exposure: all,
			Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
				b.held <- struct{}{}
				<-b.release
				return map[string]string{"id": "x"}, nil
			}},
		registry.Operation{Name: "conflict_pad", Title: "Conflict", Description: "Conflict.", InputSchema: in, OutputSchema: out, Effect: registry.EffectCreate, Exposure: all,
			Handler: registry.Typed(func(_ context.Context, in struct {
				Size int `json:"size"`
			}) (any, error) {
				return nil, duplicates(in.Size)
			})},
		registry.Operation{Name: "stdio_only", Title: "Hidden", Description: "Hidden.", InputSchema: in, OutputSchema: out, Effect: registry.EffectRead, Exposure: []registry.Transport{registry.MCPStdio}, Handler: h},
	)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func newActions(t *testing.T, cfg Config, b *blocker) (*httptest.Server, string) {
	t.Helper()
	path := writeToken(t, actionsToken)
	tf, err := bearer.NewTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(toyRegistry(t, b), executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Token = tf
	if cfg.Rate == "" {
		cfg.Rate = "1000-S"
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 4
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 4096
	}
	h, err := NewHandler(ex, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, path
}

func call(t *testing.T, url, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var authHeader = []string{"Authorization", "Bearer " + actionsToken}

func TestAuthBeforeRoutingAndIndependentCredentials(t *testing.T) {
	srv, path := newActions(t, Config{}, nil)
	for _, p := range []string{"/v1/read_pad", "/v1/nope", "/", "/openapi.json/", "/OPENAPI.JSON", "/healthz", "/mcp"} {
		if resp, body := call(t, srv.URL+p, `{}`); resp.StatusCode != 401 || !strings.Contains(body, "UNAUTHENTICATED") {
			t.Errorf("%s without token: %d %s", p, resp.StatusCode, body)
		}
	}
	if resp, _ := call(t, srv.URL+"/v1/read_pad", `{}`, "Authorization", "Bearer "+mcpToken); resp.StatusCode != 401 {
		t.Errorf("MCP token accepted by Actions: %d", resp.StatusCode)
	}
	if resp, _ := call(t, srv.URL+"/v1/read_pad", `{}`, "Authorization", "Bearer "+actionsToken, "Authorization", "Bearer "+actionsToken); resp.StatusCode != 401 {
		t.Errorf("two Authorization headers: %d", resp.StatusCode)
	}
	if resp, body := call(t, srv.URL+"/v1/read_pad", `{"size":3}`, authHeader...); resp.StatusCode != 200 || !strings.Contains(body, `"pad":"ééé"`) {
		t.Errorf("valid call: %d %s", resp.StatusCode, body)
	}
	if resp, _ := call(t, srv.URL+"/v1/nope", `{}`, authHeader...); resp.StatusCode != 404 {
		t.Errorf("unknown route with token: %d", resp.StatusCode)
	}
	if resp, _ := call(t, srv.URL+"/v1/stdio_only", `{}`, authHeader...); resp.StatusCode != 404 {
		t.Errorf("operation not exposed to Actions is routed: %d", resp.StatusCode)
	}
	// Rotation takes effect on the next request, without a restart.
	if err := os.WriteFile(path, []byte("rotated-actions-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, _ := call(t, srv.URL+"/v1/read_pad", `{}`, authHeader...); resp.StatusCode != 401 {
		t.Errorf("old token after rotation: %d", resp.StatusCode)
	}
	if resp, _ := call(t, srv.URL+"/v1/read_pad", `{}`, "Authorization", "Bearer rotated-actions-token-0123456789"); resp.StatusCode != 200 {
		t.Errorf("new token after rotation: %d", resp.StatusCode)
	}
}

func TestErrorsKeepTheMCPBody(t *testing.T) {
	srv, _ := newActions(t, Config{}, nil)
	resp, body := call(t, srv.URL+"/v1/read_pad", `{"size":-1,"extra":true}`, authHeader...)
	var e struct {
		Error struct {
			Code      string         `json:"code"`
			Retryable bool           `json:"retryable"`
			Details   map[string]any `json:"details"`
		} `json:"error"`
	}
	if resp.StatusCode != 400 || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "INVALID_ARGUMENT" || e.Error.Details["problems"] == nil {
		t.Fatalf("invalid arguments: %d %s", resp.StatusCode, body)
	}
	if resp, body := call(t, srv.URL+"/v1/read_pad", `{`, authHeader...); resp.StatusCode != 400 {
		t.Fatalf("malformed JSON: %d %s", resp.StatusCode, body)
	}
}

func TestRateLimitPerCredential(t *testing.T) {
	srv, _ := newActions(t, Config{Rate: "3-M"}, nil)
	for i := 0; i < 3; i++ {
		if resp, _ := call(t, srv.URL+"/v1/read_pad", `{}`, authHeader...); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	resp, body := call(t, srv.URL+"/v1/read_pad", `{}`, authHeader...)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "RATE_LIMITED") {
		t.Fatalf("fourth request: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// Unauthenticated requests are refused before they count.
	if resp, _ := call(t, srv.URL+"/v1/read_pad", `{}`); resp.StatusCode != 401 {
		t.Fatalf("unauthenticated while limited: %d", resp.StatusCode)
	}
}

// TestConcurrencyBound synchronises on the handler: once block_call
// signals that it runs, it holds the only slot, so the next call must be
// refused with 503; once it returns, the slot is free again.
func TestConcurrencyBound(t *testing.T) {
	b := newBlocker()
	srv, _ := newActions(t, Config{MaxConcurrent: 1}, b)
	t.Cleanup(b.Release) // runs before the server closes, even on failure
	done := make(chan int)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/block_call", strings.NewReader(`{}`))
		req.Header.Set(authHeader[0], authHeader[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case <-b.held:
	case code := <-done:
		t.Fatalf("block_call returned %d before it held the slot", code)
	}
	resp, body := call(t, srv.URL+"/v1/read_pad", `{}`, authHeader...)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "BUSY") {
		t.Fatalf("beyond the bound: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	b.Release()
	if code := <-done; code != 200 {
		t.Fatalf("held call: %d", code)
	}
	if resp, body := call(t, srv.URL+"/v1/read_pad", `{}`, authHeader...); resp.StatusCode != 200 {
		t.Fatalf("after the held call returned, the slot is still taken: %d %s", resp.StatusCode, body)
	}
}

func TestBodyAndResponseBounds(t *testing.T) {
	srv, _ := newActions(t, Config{MaxBodyBytes: 64}, nil)
	big := `{"size":1,"x":"` + strings.Repeat("a", 100) + `"}`
	if resp, _ := call(t, srv.URL+"/v1/read_pad", big, authHeader...); resp.StatusCode != 413 {
		t.Errorf("oversized body: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/read_pad", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+actionsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked oversized body: %d", resp.StatusCode)
	}
	// 60,000 two-byte characters: under 100,000 characters although over
	// 100,000 bytes, so it is returned.
	if resp, body := call(t, srv.URL+"/v1/read_pad", `{"size":60000}`, authHeader...); resp.StatusCode != 200 || len(body) < 100_000 {
		t.Errorf("result under the character limit: %d (%d bytes)", resp.StatusCode, len(body))
	}
	if resp, body := call(t, srv.URL+"/v1/read_pad", `{"size":120000}`, authHeader...); resp.StatusCode != 422 || !strings.Contains(body, "RESPONSE_TOO_LARGE") {
		t.Errorf("oversized read result: %d %.200s", resp.StatusCode, body)
	}
	resp, body := call(t, srv.URL+"/v1/write_pad", `{"size":120000}`, authHeader...)
	var o Omitted
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &o) != nil || !o.Omitted || o.ID != "0123456789abcdef0123456789abcdef" {
		t.Errorf("oversized write result must be an explicit success: %d %.200s", resp.StatusCode, body)
	}
}

// duplicates is a create's *_ALREADY_EXISTS error with n matches.
func duplicates(n int) *domainerr.Error {
	matches := make([]map[string]any, n)
	for i := range matches {
		matches[i] = map[string]any{"id": fmt.Sprintf("%032x", i), "trashed": false}
	}
	return domainerr.New(domainerr.NoteAlreadyExists, "a note with the same identity already exists; update it with update_note").
		WithDetails(map[string]any{"matches": matches, "update_tool": "update_note"})
}

func TestErrorBodiesAreBounded(t *testing.T) {
	srv, _ := newActions(t, Config{}, nil)
	resp, body := call(t, srv.URL+"/v1/conflict_pad", `{"size":3000}`, authHeader...)
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Details struct {
				Matches    []any          `json:"matches"`
				UpdateTool string         `json:"update_tool"`
				Truncated  bool           `json:"truncated"`
				Omitted    map[string]int `json:"omitted"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body is not valid JSON: %v", err)
	}
	if n := utf8.RuneCountInString(body); resp.StatusCode != 409 || n > MaxResponseChars {
		t.Fatalf("3,000 matches: status %d, %d characters (limit %d)", resp.StatusCode, n, MaxResponseChars)
	}
	d := e.Error.Details
	if e.Error.Code != "NOTE_ALREADY_EXISTS" || !strings.Contains(e.Error.Message, "update_note") || d.UpdateTool != "update_note" {
		t.Fatalf("code or message lost: %+v", e.Error)
	}
	if !d.Truncated || len(d.Matches) == 0 || d.Omitted["matches"] != 3000-len(d.Matches) {
		t.Fatalf("truncation not stated: truncated=%v kept=%d omitted=%v", d.Truncated, len(d.Matches), d.Omitted)
	}
	// A small error is returned whole, without markers.
	if _, body := call(t, srv.URL+"/v1/conflict_pad", `{"size":2}`, authHeader...); strings.Contains(body, "truncated") || strings.Count(body, `"id"`) != 2 {
		t.Fatalf("small error changed: %s", body)
	}
}
