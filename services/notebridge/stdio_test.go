package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "notebridge-bin")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "notebridge")
	out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runStdioSession feeds input to `notebridge mcp stdio` and returns stdout,
// stderr and the exit code. Joplin is pointed at a closed port.
func runStdioSession(t *testing.T, input string, extraArgs ...string) (stdout, stderr string, code int) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "joplin-token")
	if err := os.WriteFile(tokenFile, []byte("joplin-secret-token-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"mcp", "stdio", "--joplin-url", "http://127.0.0.1:1", "--joplin-wait", "0s", "--joplin-token-file", tokenFile}, extraArgs...)
	cmd := exec.Command(binPath, args...)
	cmd.Env = cleanEnv("HOME=" + t.TempDir())
	cmd.Stdin = strings.NewReader(input)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("stdio server did not exit at EOF")
	}
	return so.String(), se.String(), cmd.ProcessState.ExitCode()
}

type rpcResponse struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseLines checks stdout purity: every line is one JSON-RPC response.
func parseLines(t *testing.T, stdout string) map[string]rpcResponse {
	t.Helper()
	out := map[string]rpcResponse{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r struct {
			JSONRPC string `json:"jsonrpc"`
			rpcResponse
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %q", sc.Text())
		}
		out[fmt.Sprint(r.ID)] = r.rpcResponse
	}
	return out
}

func initialize(id int, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`, id, version)
}

func TestStdioInitializeEveryVersion(t *testing.T) {
	versions := append([]string{}, mcp.ValidProtocolVersions...)
	for _, v := range versions {
		if mcp.IsModernProtocol(v) {
			continue // 2026-07-28 has no initialize; covered below
		}
		t.Run(v, func(t *testing.T) {
			stdout, _, code := runStdioSession(t, initialize(1, v)+"\n")
			r := parseLines(t, stdout)["1"]
			var res mcp.InitializeResult
			if code != 0 || r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.ProtocolVersion != v {
				t.Fatalf("version %s: code %d, %s", v, code, stdout)
			}
		})
	}
	t.Run("unknown version", func(t *testing.T) {
		stdout, _, _ := runStdioSession(t, initialize(1, "1999-01-01")+"\n")
		var res mcp.InitializeResult
		if err := json.Unmarshal(parseLines(t, stdout)["1"].Result, &res); err != nil || res.ProtocolVersion != mcp.LATEST_LEGACY_PROTOCOL_VERSION {
			t.Fatalf("unknown version negotiated to %q: %s", res.ProtocolVersion, stdout)
		}
	})
	t.Run("2026-07-28 stateless tools/list", func(t *testing.T) {
		msg := `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		stdout, _, _ := runStdioSession(t, msg+"\n")
		r := parseLines(t, stdout)["5"]
		if r.Error != nil || !strings.Contains(string(r.Result), `"get_note"`) {
			t.Fatalf("modern tools/list: %s", stdout)
		}
	})
}

func TestStdioSession(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef"
	input := strings.Join([]string{
		initialize(1, "2025-06-18"),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`this is not json`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"NOT-A-VALID-ID-SECRETVALUE","extra":1}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"` + id + `"}}}`,
		// Last line has no trailing newline and must still be answered.
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"joplin_status","arguments":{}}}`,
	}, "\n")
	stdout, stderr, code := runStdioSession(t, input)
	if code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, stderr)
	}
	rs := parseLines(t, stdout)
	if len(rs) != 7 { // six requests plus the parse error (id null)
		t.Fatalf("want 7 responses, got %d: %s", len(rs), stdout)
	}
	if r := rs["<nil>"]; r.Error == nil || r.Error.Code != mcp.PARSE_ERROR {
		t.Errorf("malformed line: %+v", r)
	}
	if r := rs["2"]; r.Error != nil || !strings.Contains(string(r.Result), `"create_note"`) {
		t.Errorf("tools/list: %s", r.Result)
	}
	if r := rs["3"]; r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS {
		t.Errorf("unknown tool: %+v", r)
	}
	raw4 := string(rs["4"].Result)
	if text := toolErrorText(t, rs["4"].Result); !strings.Contains(text, `"INVALID_ARGUMENT"`) ||
		!strings.Contains(text, `"/id"`) || strings.Contains(raw4, "SECRETVALUE") {
		t.Errorf("schema-invalid call: %s", raw4)
	}
	if text := toolErrorText(t, rs["5"].Result); !strings.Contains(text, `"JOPLIN_UNAVAILABLE"`) || !strings.Contains(text, `"retryable":true`) {
		t.Errorf("Joplin down: %s", rs["5"].Result)
	}
	if !strings.Contains(string(rs["6"].Result), `"reachable":false`) {
		t.Errorf("unterminated last line not answered properly: %s", rs["6"].Result)
	}
	if strings.Contains(stdout+stderr, "token=") || strings.Contains(stdout+stderr, "joplin-secret-token-value") {
		t.Error("output mentions a token parameter")
	}
}

// toolErrorText returns the text block of an isError tool result, which
// holds the error object; an error result carries no structuredContent.
func toolErrorText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" || res.StructuredContent != nil {
		t.Errorf("not a text-only isError tool result: %s", raw)
		return ""
	}
	return res.Content[0].Text
}

func TestStdioOversizedAndDeepRequests(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	big := strings.Repeat("x", 3000)
	input := strings.Join([]string{
		initialize(1, "2025-11-25"),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_note","arguments":{"id":` + deep + `}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"` + big + `"}}}`,
	}, "\n") + "\n"
	stdout, _, code := runStdioSession(t, input, "--max-request-bytes", "2048")
	rs := parseLines(t, stdout)
	if code != 0 || !strings.Contains(string(rs["2"].Result), "NESTING_TOO_DEEP") {
		t.Errorf("deep: %s", rs["2"].Result)
	}
	if !strings.Contains(string(rs["3"].Result), "REQUEST_TOO_LARGE") {
		t.Errorf("big: %s", rs["3"].Result)
	}
}

func TestStdioFinishesInFlightCallsAtEOF(t *testing.T) {
	// Joplin is unreachable and the wait is 700ms: the call is still in
	// flight when stdin ends, and its answer must still be written.
	input := initialize(1, "2025-06-18") + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}` + "\n"
	stdout, _, code := runStdioSession(t, input, "--joplin-wait", "700ms")
	if r := parseLines(t, stdout)["2"]; code != 0 || !strings.Contains(string(r.Result), "JOPLIN_UNAVAILABLE") {
		t.Fatalf("in-flight call at EOF: code %d, %s", code, stdout)
	}
}

func TestCapabilitiesAndVersion(t *testing.T) {
	out, err := exec.Command(binPath, "capabilities").Output()
	if err != nil {
		t.Fatal(err)
	}
	var c capabilities
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, tr := range c.Transports {
		names = append(names, tr.Name)
	}
	if strings.Join(names, ",") != "stdio,streamable-http" || len(c.ProtocolVersions) != 5 || len(c.Operations) == 0 {
		t.Fatalf("capabilities: %s", out)
	}
	for _, op := range c.Operations {
		if op.Effect == "" || len(op.Exposure) == 0 {
			t.Errorf("operation %s lacks effect or exposure", op.Name)
		}
	}
	if v, err := exec.Command(binPath, "version").Output(); err != nil || strings.TrimSpace(string(v)) == "" {
		t.Fatalf("version: %q %v", v, err)
	}
}

// TestStdioOpensNoListener: `mcp stdio` holds no socket at all while it
// serves (Joplin is only dialled during a call), so it cannot listen.
func TestStdioOpensNoListener(t *testing.T) {
	cmd := exec.Command(binPath, "mcp", "stdio", "--joplin-url", "http://127.0.0.1:1")
	cmd.Env = cleanEnv("HOME=" + t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	fmt.Fprintln(stdin, initialize(1, "2025-06-18"))
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
	if err != nil {
		t.Skip("no /proc on this system")
	}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", cmd.Process.Pid, fd.Name()))
		if strings.HasPrefix(target, "socket:") {
			t.Fatalf("stdio process holds a socket (fd %s)", fd.Name())
		}
	}
}
