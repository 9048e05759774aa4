package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// holdJoplin wraps a fake Joplin: a request matching hold is signalled on
// arrived once its body is read, then held until the bridge aborts it,
// which is signalled on aborted.
func holdJoplin(next http.Handler, hold func(*http.Request) bool) (h http.Handler, arrived, aborted chan string) {
	arrived, aborted = make(chan string, 4), make(chan string, 4)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hold(r) {
			next.ServeHTTP(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		arrived <- r.Method + " " + r.URL.Path
		<-r.Context().Done()
		aborted <- r.Method + " " + r.URL.Path
	}), arrived, aborted
}

// inboxFolder creates a notebook "Inbox" in the Joplin at baseURL and
// returns its id.
func inboxFolder(t *testing.T, baseURL, token string) string {
	t.Helper()
	resp, err := http.Post(baseURL+"/folders?token="+token, "application/json", strings.NewReader(`{"title":"Inbox"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var folder struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&folder)
	return folder.ID
}

// within fails the test when ch yields nothing in a generous bound (a
// hang guard, not a timing assumption).
func within(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s", what)
		return ""
	}
}

// TestStdioCancellationSendsNoResponse runs the binary against a fake
// Joplin that holds get_note's GET and create_note's POST. Each is
// cancelled by notifications/cancelled once Joplin holds it: the Joplin
// request is aborted, no response is written for the cancelled id (the
// next stdout line answers a later ping, and nothing else follows), and
// the create, which had reached Joplin, is recorded in the operator
// journal as an uncertain write.
func TestStdioCancellationSendsNoResponse(t *testing.T) {
	const token = "cancel-test-token-0123456789"
	fake := joplinfake.New(token)
	h, arrived, aborted := holdJoplin(fake, func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/notes/") ||
			r.Method == http.MethodPost && r.URL.Path == "/notes"
	})
	joplin := httptest.NewServer(h)
	defer joplin.Close()
	folderID := inboxFolder(t, joplin.URL, token)

	state := t.TempDir()
	cmd := exec.Command(binPath, "mcp", "stdio", "--state-dir", state, "--joplin-url", joplin.URL, "--joplin-token-file", tokenFileB(t, token))
	stdin, _ := cmd.StdinPipe()
	stdoutPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	stdout := bufio.NewReader(stdoutPipe)
	send := func(s string) { io.WriteString(stdin, s+"\n") }
	next := func() string {
		line, err := stdout.ReadString('\n')
		if err != nil {
			t.Fatalf("read stdout: %v", err)
		}
		return line
	}
	send(initialize(1, "2025-06-18"))
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	calls := []struct{ id, call, held string }{
		{"2", `{"name":"get_note","arguments":{"id":"0123456789abcdef0123456789abcdef"}}`, "GET /notes/0123456789abcdef0123456789abcdef"},
		{"4", `{"name":"create_note","arguments":{"notebook_id":"` + folderID + `","title":"Secret Title","body":"secret body"}}`, "POST /notes"},
	}
	for i, c := range calls {
		send(`{"jsonrpc":"2.0","id":` + c.id + `,"method":"tools/call","params":` + c.call + `}`)
		if got := within(t, arrived, "request at Joplin"); got != c.held {
			t.Fatalf("Joplin holds %q, want %q", got, c.held)
		}
		send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + c.id + `,"reason":"user"}}`)
		within(t, aborted, "abort of the Joplin request")
		ping := fmt.Sprint(100 + i)
		send(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`)
		if line := next(); !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":`+ping+`,"result"`) {
			t.Fatalf("after cancelling id %s the next line is %q, want the answer to ping %s", c.id, line, ping)
		}
	}
	stdin.Close()
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil || len(rest) > 0 {
		t.Fatalf("after the last ping: %q (%v), want nothing", rest, err)
	}
	raw, err := os.ReadFile(filepath.Join(state, "uncertain-writes.jsonl"))
	if err != nil || strings.Count(string(raw), "\n") != 1 || !strings.Contains(string(raw), `"create_note"`) ||
		!strings.Contains(string(raw), "WRITE_OUTCOME_UNKNOWN") || strings.Contains(string(raw), "Secret") {
		t.Fatalf("journal: %q %v", raw, err)
	}
}

// TestHTTPCancellationSendsNoResponse is the same over Streamable HTTP
// against `notebridge serve`: a create_note held by Joplin is cancelled by
// a notifications/cancelled posted in the session; the Joplin request is
// aborted, the call's POST ends without a JSON-RPC response, the session
// keeps working, and the create is journaled as an uncertain write.
func TestHTTPCancellationSendsNoResponse(t *testing.T) {
	const token, mcpToken = "cancel-test-token-0123456789", "cancel-test-mcp-token-0123456789"
	fake := joplinfake.New(token)
	h, arrived, aborted := holdJoplin(fake, func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Path == "/notes"
	})
	joplin := httptest.NewServer(h)
	defer joplin.Close()
	folderID := inboxFolder(t, joplin.URL, token)
	state := t.TempDir()
	addrs, exited, stderr := startServeB(t, "--joplin-url", joplin.URL, "--joplin-token-file", tokenFileB(t, token),
		"--mcp-token-file", tokenFileB(t, mcpToken), "--state-dir", state)
	if exited {
		t.Fatalf("serve exited: %s", stderr)
	}
	url := "http://" + addrs["MCP Streamable HTTP"] + "/mcp"
	var sid string
	do := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+mcpToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
		return resp.StatusCode, string(b)
	}
	if code, body := do(initialize(1, "2025-06-18")); code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	type answer struct {
		code int
		body string
	}
	answered := make(chan answer, 1)
	go func() {
		code, body := do(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_note","arguments":{"notebook_id":"` + folderID + `","title":"Secret Title","body":"secret body"}}}`)
		answered <- answer{code, body}
	}()
	within(t, arrived, "create at Joplin")
	if code, body := do(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`); code != 202 {
		t.Fatalf("cancellation: %d %s", code, body)
	}
	within(t, aborted, "abort of the create at Joplin")
	if a := <-answered; a.code != 200 || strings.TrimSpace(a.body) != "" {
		t.Errorf("cancelled call answered: %d %q", a.code, a.body)
	}
	if code, body := do(`{"jsonrpc":"2.0","id":8,"method":"ping"}`); code != 200 || !strings.Contains(body, `"id":8`) {
		t.Errorf("ping after the cancellation: %d %s", code, body)
	}
	raw, err := os.ReadFile(filepath.Join(state, "uncertain-writes.jsonl"))
	if err != nil || !strings.Contains(string(raw), `"create_note"`) || !strings.Contains(string(raw), `"mcp-http"`) || strings.Contains(string(raw), "Secret") {
		t.Fatalf("journal: %q %v", raw, err)
	}
}
