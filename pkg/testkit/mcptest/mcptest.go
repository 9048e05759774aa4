// Package mcptest connects real MCP clients (mark3labs/mcp-go) to the
// notebridge adapters, so scenarios run through the actual protocol: an
// in-process stdio pipe, Streamable HTTP, or the built binary over stdio.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// CallFunc calls one tool and returns its structured result or domain error.
type CallFunc func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error)

// Caller adapts an initialized client. It fails the test when a result
// breaks the adapter contract: a success needs structuredContent and one
// text block holding the same JSON; an error (isError) needs one text block
// holding {"error": {...}} and no structuredContent, which would have to
// match the tool's outputSchema (docs/errors.md). A file sent as an image
// or audio block after the text (registry.Operation.Media) is put back as
// the result's data_base64, so callers see the operation's own answer.
func Caller(t testing.TB, c *client.Client) CallFunc {
	return func(ctx context.Context, name string, args any) (json.RawMessage, *domainerr.Error) {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return nil, &domainerr.Error{Code: "PROTOCOL_ERROR", Message: err.Error()}
		}
		raw := res.RawStructuredContent
		if len(raw) == 0 && res.StructuredContent != nil {
			raw, _ = json.Marshal(res.StructuredContent)
		}
		file, media := fileBlock(res)
		text, ok := mcp.TextContent{}, len(res.Content) == 1 || media
		if ok {
			text, ok = res.Content[0].(mcp.TextContent)
		}
		if !ok {
			t.Errorf("%s: want one text block, got %d content blocks", name, len(res.Content))
			return nil, &domainerr.Error{Code: "PROTOCOL_ERROR"}
		}
		if res.IsError {
			var body struct {
				Error *domainerr.Error `json:"error"`
			}
			if len(raw) != 0 {
				t.Errorf("%s: error result carries structuredContent: %s", name, raw)
			}
			if err := json.Unmarshal([]byte(text.Text), &body); err != nil || body.Error == nil {
				t.Errorf("%s: isError result without an error object: %s", name, text.Text)
				return nil, &domainerr.Error{Code: "PROTOCOL_ERROR"}
			}
			return nil, body.Error
		}
		if len(raw) == 0 {
			t.Errorf("%s: result lacks structuredContent", name)
			return nil, &domainerr.Error{Code: "PROTOCOL_ERROR"}
		}
		if !sameJSON(text.Text, raw) {
			t.Errorf("%s: text content differs from structuredContent", name)
		}
		if media {
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil || obj["data_base64"] != nil {
				t.Errorf("%s: a file block beside a result that holds its data: %s", name, raw)
				return nil, &domainerr.Error{Code: "PROTOCOL_ERROR"}
			}
			obj["data_base64"] = file
			raw, _ = json.Marshal(obj)
		}
		return raw, nil
	}
}

// fileBlock returns the base64 data of the image or audio block that
// follows a result's text, if it has one.
func fileBlock(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) != 2 {
		return "", false
	}
	switch c := res.Content[1].(type) {
	case mcp.ImageContent:
		return c.Data, true
	case mcp.AudioContent:
		return c.Data, true
	}
	return "", false
}

func sameJSON(a string, b []byte) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func start(t testing.TB, c *client.Client) *client.Client {
	t.Helper()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp client start: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "notebridge-test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("mcp initialize: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// InProcessStdio serves srv with mcpadapter.ServeStdio over a pair of pipes
// and returns an initialized client speaking to it.
func InProcessStdio(t testing.TB, srv *mcpadapter.Server) *client.Client {
	t.Helper()
	return InProcessStdioAs(t, srv, principal.Stdio())
}

// InProcessStdioAs is InProcessStdio for the stdio owner limited as who
// (say, by --notebooks).
func InProcessStdioAs(t testing.TB, srv *mcpadapter.Server, who principal.Principal) *client.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpadapter.ServeStdioAs(context.Background(), who, srv, inR, outW, 32<<20, slog.New(slog.DiscardHandler))
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); <-done })
	return start(t, client.NewClient(transport.NewIO(outR, inW, io.NopCloser(nilReader{}))))
}

type nilReader struct{}

func (nilReader) Read([]byte) (int, error) { return 0, io.EOF }

// HTTP serves srv through the real Streamable HTTP handler (bearer auth,
// origin and size checks) and returns an initialized client.
func HTTP(t testing.TB, srv *mcpadapter.Server) *client.Client {
	t.Helper()
	return HTTPWith(t, srv, nil)
}

// HTTPWith is HTTP with the static token limited to notebooks (nil:
// every notebook).
func HTTPWith(t testing.TB, srv *mcpadapter.Server, notebooks *notebookscope.Scope) *client.Client {
	t.Helper()
	const token = "mcptest-bearer-token-0123456789"
	path := filepath.Join(t.TempDir(), "mcp-token")
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := bearer.NewTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpadapter.NewHTTPHandler(srv, mcpadapter.HTTPConfig{Token: tf, MaxBodyBytes: 32 << 20, TokenNotebooks: notebooks}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return HTTPBehind(t, h, token)
}

// HTTPBehind serves h (an MCP HTTP handler) and returns an initialized
// client presenting token.
func HTTPBehind(t testing.TB, h http.Handler, token string) *client.Client {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	c, err := client.NewStreamableHttpClient(hs.URL+mcpadapter.Path,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c)
}

// Binary runs `bin mcp stdio args...` and returns an initialized client.
func Binary(t testing.TB, bin string, args ...string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(bin, os.Environ(), append([]string{"mcp", "stdio"}, args...)...)
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	ctx := context.Background()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "notebridge-test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("mcp initialize over binary stdio: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// BuildBinary compiles the notebridge CLI into a temporary directory.
func BuildBinary(t testing.TB, moduleRoot string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "notebridge")
	cmd := exec.Command("go", "build", "-o", out, "./services/notebridge")
	cmd.Dir = moduleRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build notebridge: %v\n%s", err, b)
	}
	return out
}

// ModuleRoot finds the directory holding go.mod, walking up from the
// working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(fmt.Errorf("go.mod not found above the working directory"))
		}
		dir = parent
	}
}
