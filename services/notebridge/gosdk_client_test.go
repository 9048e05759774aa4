package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestGoSDKClientReadsToolErrors drives the built binary with the official
// Go SDK client (github.com/modelcontextprotocol/go-sdk) over stdio and
// Streamable HTTP, against the fake Joplin. Like the TypeScript SDK, the
// client must get a success whose structuredContent validates against the
// tool's outputSchema, and read the code, message and details of a
// duplicate create, a NOT_FOUND and an INVALID_ARGUMENT. The Go SDK does
// not validate results itself, so the test applies the rule a validating
// client applies: any structuredContent present must match the outputSchema.
// The TypeScript clients run in deploy/ci/real-clients.sh.
func TestGoSDKClientReadsToolErrors(t *testing.T) {
	joplinArgs := fakeJoplinArgs(t)

	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(binPath, append([]string{"mcp", "stdio"}, joplinArgs...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		checkToolErrors(t, &mcp.CommandTransport{Command: cmd})
	})
	t.Run("streamable http", func(t *testing.T) {
		addr, _, token := startMCPServe(t, joplinArgs...)
		checkToolErrors(t, &mcp.StreamableClientTransport{
			Endpoint:   "http://" + addr + "/mcp",
			HTTPClient: &http.Client{Transport: bearerTransport{token: token}},
		})
	})
}

// fakeJoplinArgs serves a fake Joplin and returns the flags that point
// the binary at it.
func fakeJoplinArgs(t *testing.T) []string {
	const joplinToken = "gosdk-joplin-token-0123456789"
	fake := httptest.NewServer(joplinfake.New(joplinToken))
	t.Cleanup(fake.Close)
	tokenFile := filepath.Join(t.TempDir(), "joplin-token")
	if err := os.WriteFile(tokenFile, []byte(joplinToken), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--joplin-url", fake.URL, "--joplin-token-file", tokenFile, "--joplin-wait", "2s"}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// startMCPServe runs `notebridge mcp serve` on a free loopback port and
// returns its address, process id and generated bearer token, once it has
// logged that it listens.
func startMCPServe(t testing.TB, args ...string) (addr string, pid int, token string) {
	t.Helper()
	state := t.TempDir()
	cmd := exec.Command(binPath, append([]string{"mcp", "serve", "--listen", "127.0.0.1:0", "--state-dir", state}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrRe := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(stderr)
	for addr == "" && sc.Scan() {
		if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("mcp serve exited without logging its address")
	}
	go func() {
		for sc.Scan() { // drain stderr so the server never blocks on it
		}
	}()
	b, err := os.ReadFile(filepath.Join(state, "mcp-token"))
	if err != nil {
		t.Fatal(err)
	}
	return addr, cmd.Process.Pid, strings.TrimSpace(string(b))
}

// toolErr is the error object an agent reads from an isError result.
type toolErr struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details"`
}

func checkToolErrors(t *testing.T, tr mcp.Transport) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "notebridge-gosdk-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		if tool.OutputSchema == nil {
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s outputSchema: %v", tool.Name, err)
		}
		if schemas[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s outputSchema: %v", tool.Name, err)
		}
	}
	// call returns the result's text block, after checking that any
	// structuredContent validates against the tool's outputSchema.
	call := func(name string, args map[string]any) (text string, isError bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.StructuredContent != nil {
			if err := schemas[name].Validate(res.StructuredContent); err != nil {
				t.Fatalf("%s: structured content does not match the tool's output schema: %v", name, err)
			}
		}
		if len(res.Content) != 1 {
			t.Fatalf("%s: %d content blocks", name, len(res.Content))
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s: content is %T, not text", name, res.Content[0])
		}
		if !res.IsError && res.StructuredContent == nil {
			t.Fatalf("%s: success without structuredContent", name)
		}
		return tc.Text, res.IsError
	}
	wantErr := func(name string, args map[string]any, code string) toolErr {
		t.Helper()
		text, isError := call(name, args)
		var body struct{ Error *toolErr }
		if !isError || json.Unmarshal([]byte(text), &body) != nil || body.Error == nil {
			t.Fatalf("%s: want an error result, got %s", name, text)
		}
		if e := body.Error; e.Code != code || e.Message == "" || e.Retryable {
			t.Fatalf("%s: want %s with a message, not retryable: %s", name, code, text)
		}
		return *body.Error
	}
	if schemas["create_note"] == nil {
		t.Fatal("create_note has no outputSchema")
	}

	// Success: structuredContent validates (checked in call).
	suffix := rand.Text()[:8]
	var nb, note struct{ ID, Title string }
	text, isError := call("create_notebook", map[string]any{"title": "Go SDK " + suffix})
	if isError || json.Unmarshal([]byte(text), &nb) != nil {
		t.Fatalf("create_notebook: %s", text)
	}
	title := "Plan " + suffix
	text, isError = call("create_note", map[string]any{"notebook_id": nb.ID, "title": title})
	if isError || json.Unmarshal([]byte(text), &note) != nil || note.Title != title {
		t.Fatalf("create_note: %s", text)
	}

	// (a) A duplicate create names the existing note and update_note.
	e := wantErr("create_note", map[string]any{"notebook_id": nb.ID, "title": title}, "NOTE_ALREADY_EXISTS")
	matches, _ := json.Marshal(e.Details["matches"])
	if !strings.Contains(e.Message, "update_note") || e.Details["update_tool"] != "update_note" ||
		string(matches) != `[{"id":"`+note.ID+`","trashed":false}]` {
		t.Fatalf("duplicate create: %+v", e)
	}
	// (b) NOT_FOUND.
	missing := make([]byte, 16)
	rand.Read(missing)
	wantErr("get_note", map[string]any{"id": hex.EncodeToString(missing)}, "NOT_FOUND")
	// (c) INVALID_ARGUMENT names the path, never the value.
	e = wantErr("get_note", map[string]any{"id": "not-an-id-SECRETVALUE"}, "INVALID_ARGUMENT")
	problems, _ := json.Marshal(e.Details["problems"])
	if !strings.Contains(string(problems), `"path":"/id"`) || strings.Contains(string(problems), "SECRETVALUE") {
		t.Fatalf("invalid argument: %+v", e)
	}
}
