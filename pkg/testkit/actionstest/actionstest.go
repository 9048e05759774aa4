// Package actionstest drives the GPT Actions surface over real HTTP, so the
// Joplin scenarios can run through it exactly as through MCP.
package actionstest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/transport/actions"
)

const token = "actionstest-bearer-token-0123456789"

// Caller serves ex's Actions operations on a test server and returns a
// function calling them like an agent would: POST /v1/<name> with the
// arguments as body. A non-200 answer must carry the domain error body
// with the status the error code maps to.
func Caller(t testing.TB, ex *executor.Executor) func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error) {
	t.Helper()
	return CallerWith(t, ex, nil)
}

// CallerWith is Caller with the token limited to notebooks (nil: every
// notebook).
func CallerWith(t testing.TB, ex *executor.Executor, notebooks *notebookscope.Scope) func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "actions-token")
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := bearer.NewTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := actions.NewHandler(ex, actions.Config{Token: tf, MaxBodyBytes: 32 << 20, MaxConcurrent: 64, Rate: "100000-S", TokenNotebooks: notebooks})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error) {
		body, _ := json.Marshal(args)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+actions.RoutePrefix+name, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, &domainerr.Error{Code: "PROTOCOL_ERROR", Message: err.Error()}
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK {
			return out, nil
		}
		var e struct {
			Error *domainerr.Error `json:"error"`
		}
		if json.Unmarshal(out, &e) != nil || e.Error == nil {
			t.Errorf("%s: status %d without an error body: %.200s", name, resp.StatusCode, out)
			return nil, &domainerr.Error{Code: "PROTOCOL_ERROR"}
		}
		if want := actions.Status(e.Error.Code); want != resp.StatusCode {
			t.Errorf("%s: %s answered with %d, want %d", name, e.Error.Code, resp.StatusCode, want)
		}
		return nil, e.Error
	}
}
