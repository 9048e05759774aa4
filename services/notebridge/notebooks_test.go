package main

import (
	"context"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestStdioNotebooksFlag: `mcp stdio --notebooks Work` sees the Work tree
// only (by path), and joplin_status says so; a malformed setting stops
// the start with a clear error.
func TestStdioNotebooksFlag(t *testing.T) {
	_, url, tf := joplinfake.Serve(t, "fake-joplin-token-0123456789")
	jc, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf})
	if err != nil {
		t.Fatal(err)
	}
	folder := func(title, parent string) string {
		var out struct{ ID string }
		if err := jc.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": title, "parent_id": parent}, &out); err != nil {
			t.Fatal(err)
		}
		return out.ID
	}
	work := folder("Work", "")
	folder("Clients", work)
	private := folder("Private", "")
	input := initialize(1, "2025-06-18") + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"joplin_status","arguments":{}}}` + "\n"
	stdout, stderr, code := runStdioSession(t, input, "--joplin-url", url, "--joplin-token-file", tf, "--state-dir", t.TempDir(),
		"--notebooks", "Work", "--write-notebooks", "Work/Clients")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := parseLines(t, stdout)
	list, status := string(got["2"].Result), string(got["3"].Result)
	if !strings.Contains(list, "Clients") || strings.Contains(list, "Private") || strings.Contains(list, private) {
		t.Fatalf("list_notebooks: %s", list)
	}
	if !strings.Contains(status, `"notebooks":{"all":false,"read":["Work"],"write":["Work/Clients"]}`) {
		t.Fatalf("joplin_status: %s", status)
	}
	_, stderr, code = runStdioSession(t, input, "--notebooks", "Work//Clients")
	if code == 0 || !strings.Contains(stderr, "--notebooks") {
		t.Fatalf("a malformed setting: exit %d, %s", code, stderr)
	}
}
