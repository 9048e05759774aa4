package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestUncertainWriteReachesTheOperatorJournal drops Joplin's answer to a
// create and checks that the binary records it in the journal (ids and an
// argument digest only) and that `notebridge journal` shows it.
func TestUncertainWriteReachesTheOperatorJournal(t *testing.T) {
	const token = "journal-test-token-0123456789"
	proxy := httptest.NewServer(joplinfake.DropAnswers(joplinfake.New(token), func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Path == "/notes"
	}))
	defer proxy.Close()
	folderID := inboxFolder(t, proxy.URL, token)

	state := t.TempDir()
	cmd := exec.Command(binPath, "mcp", "stdio", "--state-dir", state, "--joplin-url", proxy.URL, "--joplin-token-file", tokenFileB(t, token))
	cmd.Stdin = strings.NewReader(initialize(1, "2025-06-18") + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_note","arguments":{"notebook_id":"` + folderID + `","title":"Secret Title","body":"secret body"}}}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if r := parseLines(t, string(out))["2"]; !strings.Contains(string(r.Result), "WRITE_OUTCOME_UNKNOWN") {
		t.Fatalf("create: %s", r.Result)
	}
	raw, err := os.ReadFile(filepath.Join(state, "uncertain-writes.jsonl"))
	if err != nil || strings.Contains(string(raw), "Secret") || strings.Contains(string(raw), "secret body") || strings.Contains(string(raw), token) {
		t.Fatalf("journal file: %q %v", raw, err)
	}
	list, err := exec.Command(binPath, "journal", "--state-dir", state).Output()
	if err != nil || !strings.Contains(string(list), "create_note") || !strings.Contains(string(list), "WRITE_OUTCOME_UNKNOWN") || !strings.Contains(string(list), "id=") {
		t.Fatalf("journal list: %s %v", list, err)
	}
	show, err := exec.Command(binPath, "journal", "show", "1", "--state-dir", state).Output()
	var e struct {
		Operation  string            `json:"operation"`
		ArgsSHA256 string            `json:"args_sha256"`
		Objects    map[string]string `json:"objects"`
	}
	if err != nil || json.Unmarshal(show, &e) != nil || e.Operation != "create_note" || len(e.ArgsSHA256) != 64 || len(e.Objects["id"]) != 32 {
		t.Fatalf("journal show: %s %v", show, err)
	}
	if err := exec.Command(binPath, "journal", "show", "2", "--state-dir", state).Run(); err == nil {
		t.Fatal("showing a missing entry succeeded")
	}
}
