package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestReadOnlyFlagAndEnvironment: --read-only (or NOTEBRIDGE_READ_ONLY)
// leaves only reads in capabilities, the OpenAPI document and MCP
// tools/list, and a hand-crafted write call over stdio is refused.
func TestReadOnlyFlagAndEnvironment(t *testing.T) {
	readOnlyCaps := func(env []string, args ...string) capabilities {
		t.Helper()
		cmd := exec.Command(binPath, append([]string{"capabilities"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("capabilities %v: %v", args, err)
		}
		var c capabilities
		if err := json.Unmarshal(out, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for name, c := range map[string]capabilities{
		"flag": readOnlyCaps(nil, "--read-only"),
		"env":  readOnlyCaps([]string{"NOTEBRIDGE_READ_ONLY=true"}),
	} {
		if !c.ReadOnly || len(c.Operations) == 0 {
			t.Fatalf("%s: not read-only: %+v", name, c)
		}
		for _, op := range c.Operations {
			if op.Effect != "read" {
				t.Errorf("%s: read-only capabilities list %s (%s)", name, op.Name, op.Effect)
			}
		}
	}
	if c := readOnlyCaps([]string{"NOTEBRIDGE_READ_ONLY=true"}, "--read-only=false"); c.ReadOnly {
		t.Error("the command line does not win over NOTEBRIDGE_READ_ONLY")
	}

	doc, err := exec.Command(binPath, "openapi", "--origin", "https://notes.example.com", "--read-only").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "/v1/get_note") || strings.Contains(string(doc), "/v1/create_note") {
		t.Error("openapi --read-only does not list exactly the reads")
	}

	input := strings.Join([]string{
		initialize(1, "2025-06-18"),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_tag","arguments":{"title":"x"}}}`,
	}, "\n")
	stdout, stderr, code := runStdioSession(t, input, "--read-only")
	if code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, stderr)
	}
	rs := parseLines(t, stdout)
	if r := rs["2"]; r.Error != nil || !strings.Contains(string(r.Result), `"get_note"`) || strings.Contains(string(r.Result), `"create_tag"`) {
		t.Errorf("read-only tools/list: %s", r.Result)
	}
	if r := rs["3"]; r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS {
		t.Errorf("write over read-only stdio: %+v %s", r.Error, r.Result)
	}
}
