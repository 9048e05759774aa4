package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const (
	joplinSecret  = "joplin-secret-0123456789abcdef"
	mcpSecret     = "mcp-secret-0123456789abcdef000"
	actionsSecret = "actions-secret-0123456789abcdef"
)

// bridge is a running notebridge HTTP command and its stderr lines.
type bridge struct {
	addrs map[string]string
	lines chan string
}

// startBridge runs the command (serve or mcp serve) with Joplin down and
// returns once every surface in want has logged its address; exited is
// true, with the stderr so far, when the command stopped first.
func startBridge(t *testing.T, want []string, args ...string) (b bridge, exited bool, stderr string) {
	t.Helper()
	args = append(args, "--listen", "127.0.0.1:0", "--state-dir", t.TempDir(), "--joplin-url", "http://127.0.0.1:1", "--joplin-wait", "0s")
	if args[0] == "serve" {
		args = append(args, "--actions-listen", "127.0.0.1:0")
	}
	cmd := exec.Command(binPath, args...)
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	b = bridge{addrs: map[string]string{}, lines: make(chan string, 256)}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			b.lines <- sc.Text()
		}
		close(b.lines)
	}()
	re := regexp.MustCompile(`msg="serving (MCP Streamable HTTP|GPT Actions)" addr=(\S+)`)
	var all strings.Builder
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-b.lines:
			if !ok {
				return b, true, all.String()
			}
			all.WriteString(l + "\n")
			if m := re.FindStringSubmatch(l); m != nil {
				b.addrs[m[1]] = m[2]
			}
			if len(b.addrs) == len(want) {
				return b, false, all.String()
			}
		case <-deadline:
			t.Fatalf("%v did not start: %s", args[:2], all.String())
		}
	}
}

// waitLog returns the first stderr line containing s.
func (b bridge) waitLog(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-b.lines:
			if !ok {
				t.Fatalf("exited before logging %q", s)
			}
			if strings.Contains(l, s) {
				return l
			}
		case <-deadline:
			t.Fatalf("no log line with %q", s)
		}
	}
}

// postTo sends one authenticated POST (no header when tok is empty) and
// returns the status and body.
func postTo(t *testing.T, url, tok, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func writeSecret(t *testing.T, path, tok string) {
	t.Helper()
	// Write to a new file and rename it over the old one, as operators rotate.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestServeRefusesCollidingCredentialsAtStartup(t *testing.T) {
	dir := t.TempDir()
	file := func(name, tok string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	joplin, mcp, actions := file("joplin", joplinSecret), file("mcp", mcpSecret), file("actions", actionsSecret)
	link := func(name, target string, hard bool) string {
		p := filepath.Join(dir, name)
		var err error
		if hard {
			err = os.Link(target, p)
		} else {
			err = os.Symlink(target, p)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mcpHardLink, actionsHardLink := link("mcp-hard", mcp, true), link("actions-hard", actions, true)
	joplinToMCP, joplinToActions := link("joplin-to-mcp", mcp, false), link("joplin-to-actions", actions, false)
	joplinValue, mcpValue := file("joplin-value", joplinSecret), file("mcp-value", mcpSecret)
	withActions := func(mcpFile, actionsFile, joplinFile string) []string {
		return []string{"serve", "--actions-enabled", "--actions-token-file", actionsFile, "--mcp-token-file", mcpFile, "--joplin-token-file", joplinFile}
	}
	mcpServe := func(mcpFile, joplinFile string) []string {
		return []string{"mcp", "serve", "--mcp-token-file", mcpFile, "--joplin-token-file", joplinFile}
	}
	cases := map[string][]string{
		"mcp serve: Joplin token file as bearer file": mcpServe(joplin, joplin),
		"mcp serve: bearer file hard-linked":          mcpServe(mcp, link("joplin-hard-to-mcp", mcp, true)),
		"mcp serve: Joplin token symlinked to bearer": mcpServe(mcp, joplinToMCP),
		"mcp serve: bearer holds the Joplin token":    mcpServe(joplinValue, joplin),
		"serve: Joplin token file as MCP file":        {"serve", "--mcp-token-file", joplin, "--joplin-token-file", joplin},
		"serve: Joplin token file as Actions file":    withActions(mcp, joplin, joplin),
		"serve: same Actions and MCP file":            withActions(mcp, mcp, joplin),
		"serve: Actions file hard link of MCP file":   withActions(mcp, mcpHardLink, joplin),
		"serve: MCP file hard link of Actions file":   withActions(actionsHardLink, actions, joplin),
		"serve: Joplin token symlinked to Actions":    withActions(mcp, actions, joplinToActions),
		"serve: Actions holds the MCP token":          withActions(mcp, mcpValue, joplin),
		"serve: Actions holds the Joplin token":       withActions(mcp, joplinValue, joplin),
		"serve: MCP holds the Joplin token":           withActions(joplinValue, actions, joplin),
	}
	for name, args := range cases {
		_, exited, stderr := startBridge(t, []string{"MCP Streamable HTTP"}, args...)
		if !exited || !strings.Contains(stderr, "notebridge:") || !strings.Contains(stderr, "each credential needs its own file and its own token") {
			t.Errorf("%s: exited=%v stderr=%s", name, exited, stderr)
		}
		for _, secret := range []string{joplinSecret, mcpSecret, actionsSecret} {
			if strings.Contains(stderr, secret) {
				t.Errorf("%s: stderr shows a token", name)
			}
		}
	}
	// Distinct files and tokens start.
	if _, exited, stderr := startBridge(t, []string{"MCP Streamable HTTP", "GPT Actions"}, withActions(mcp, actions, joplin)...); exited {
		t.Fatalf("distinct credentials refused: %s", stderr)
	}
}

func TestServeFailsClosedWhenARotationMakesCredentialsCollide(t *testing.T) {
	dir := t.TempDir()
	joplin, mcp, actions := filepath.Join(dir, "joplin"), filepath.Join(dir, "mcp"), filepath.Join(dir, "actions")
	writeSecret(t, joplin, joplinSecret)
	writeSecret(t, mcp, mcpSecret)
	writeSecret(t, actions, actionsSecret)
	b, exited, stderr := startBridge(t, []string{"MCP Streamable HTTP", "GPT Actions"}, "serve", "--actions-enabled",
		"--actions-token-file", actions, "--mcp-token-file", mcp, "--joplin-token-file", joplin)
	if exited {
		t.Fatalf("serve exited: %s", stderr)
	}
	actionsURL, mcpURL := "http://"+b.addrs["GPT Actions"]+"/v1/joplin_status", "http://"+b.addrs["MCP Streamable HTTP"]+"/mcp"
	init := initialize(1, "2025-06-18")
	next := "actions-rotated-0123456789abcdef"
	label := map[string]string{mcpSecret: "the MCP token", actionsSecret: "the Actions token", next: "the rotated Actions token", "": "no token"}
	// wantAll checks each token (or none) on both surfaces: the wanted
	// Actions and MCP statuses.
	wantAll := func(stage string, want map[string][2]int) {
		t.Helper()
		for tok, codes := range want {
			if code, body := postTo(t, actionsURL, tok, `{}`); code != codes[0] || (code == 503 && !strings.Contains(body, "CREDENTIAL_CONFLICT")) {
				t.Errorf("%s: Actions with %s: %d, want %d: %s", stage, label[tok], code, codes[0], body)
			}
			if code, body := postTo(t, mcpURL, tok, init); code != codes[1] || (code == 503 && !strings.Contains(body, "CREDENTIAL_CONFLICT")) {
				t.Errorf("%s: MCP with %s: %d, want %d: %s", stage, label[tok], code, codes[1], body)
			}
		}
	}
	wantAll("distinct", map[string][2]int{actionsSecret: {200, 401}, mcpSecret: {401, 200}, "": {401, 401}})

	// The Actions file is rotated to the MCP token: both surfaces refuse
	// every request, the MCP token on Actions above all.
	writeSecret(t, actions, mcpSecret)
	wantAll("Actions rotated to the MCP token", map[string][2]int{mcpSecret: {503, 503}, actionsSecret: {503, 503}, "": {503, 503}})
	line := b.waitLog(t, "credential conflict")
	if !strings.Contains(line, actions) || !strings.Contains(line, mcp) || strings.Contains(line, mcpSecret) {
		t.Errorf("the log line must name both files and no token: %s", line)
	}
	writeSecret(t, actions, next)
	wantAll("fixed", map[string][2]int{next: {200, 401}, mcpSecret: {401, 200}})

	// The Joplin token file is rotated to the MCP token: MCP refuses
	// everything, Actions keeps serving.
	writeSecret(t, joplin, mcpSecret)
	wantAll("Joplin rotated to the MCP token", map[string][2]int{mcpSecret: {401, 503}, next: {200, 503}})
	writeSecret(t, joplin, joplinSecret)
	wantAll("Joplin fixed", map[string][2]int{mcpSecret: {401, 200}, next: {200, 401}})

	// The MCP file is replaced by a hard link to the Actions file.
	if err := os.Remove(mcp); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(actions, mcp); err != nil {
		t.Fatal(err)
	}
	wantAll("MCP hard-linked to Actions", map[string][2]int{next: {503, 503}, "": {503, 503}})
}

func TestMCPServeRefusesTheJoplinTokenAfterRotation(t *testing.T) {
	dir := t.TempDir()
	joplin, mcp := filepath.Join(dir, "joplin"), filepath.Join(dir, "mcp")
	writeSecret(t, joplin, joplinSecret)
	writeSecret(t, mcp, mcpSecret)
	b, exited, stderr := startBridge(t, []string{"MCP Streamable HTTP"}, "mcp", "serve", "--mcp-token-file", mcp, "--joplin-token-file", joplin)
	if exited {
		t.Fatalf("mcp serve exited: %s", stderr)
	}
	url, init := "http://"+b.addrs["MCP Streamable HTTP"]+"/mcp", initialize(1, "2025-06-18")
	if code, _ := postTo(t, url, mcpSecret, init); code != 200 {
		t.Fatalf("MCP token: %d", code)
	}
	writeSecret(t, mcp, joplinSecret)
	if code, body := postTo(t, url, joplinSecret, init); code != 503 || !strings.Contains(body, "CREDENTIAL_CONFLICT") {
		t.Fatalf("the Joplin token accepted as MCP bearer: %d %s", code, body)
	}
	if line := b.waitLog(t, "credential conflict"); !strings.Contains(line, joplin) || strings.Contains(line, joplinSecret) {
		t.Errorf("the log line must name the Joplin token file and no token: %s", line)
	}
	writeSecret(t, mcp, mcpSecret)
	if code, _ := postTo(t, url, mcpSecret, init); code != 200 {
		t.Fatalf("after the fix: %d", code)
	}
	if code, _ := postTo(t, url, joplinSecret, init); code != 401 {
		t.Fatalf("the Joplin token after the fix: %d", code)
	}
}
