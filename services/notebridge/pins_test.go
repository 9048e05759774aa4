package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/joplin/scopepin"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestPathScopeSurvivesARename: a stdio client scoped to --notebooks
// Clients keeps seeing only that notebook after another client, a writer
// scoped to Scratch, plants a note in Scratch and renames it Clients:
// in the next session (a restart) too. The pin is a private file of the
// state directory; joplin_status and the log report that the path no
// longer names what it named.
func TestPathScopeSurvivesARename(t *testing.T) {
	const token = "fake-joplin-token-0123456789"
	_, joplinURL, tf := joplinfake.Serve(t, token)
	clients, scratch := fakeFolder(t, joplinURL, tf, "Clients", ""), fakeFolder(t, joplinURL, tf, "Scratch", "")
	// Both clients share one state directory, as one person's bridge does.
	state := filepath.Join(t.TempDir(), "state")
	session := func(input string, args ...string) (map[string]rpcResponse, string) {
		t.Helper()
		stdout, stderr, code := runStdioSession(t, initialize(1, "2025-06-18")+"\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+input,
			append([]string{"--joplin-url", joplinURL, "--joplin-token-file", tf, "--joplin-wait", "5s", "--state-dir", state}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return parseLines(t, stdout), stderr
	}
	call := func(id int, tool, args string) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}` + "\n"
	}
	victim := []string{"--notebooks", "Clients"}
	got, _ := session(call(2, "list_notebooks", `{}`), victim...)
	if list := string(got["2"].Result); !strings.Contains(list, clients) || strings.Contains(list, scratch) {
		t.Fatalf("the Clients client before the rename: %s", list)
	}

	got, stderr := session(call(2, "create_note", `{"notebook_id":"`+scratch+`","title":"Planted","body":"planted text"}`)+
		call(3, "update_notebook", `{"id":"`+scratch+`","title":"Clients"}`),
		"--notebooks", "Scratch")
	if strings.Contains(string(got["2"].Result), `"isError":true`) || strings.Contains(string(got["3"].Result), `"isError":true`) {
		t.Fatalf("the Scratch writer's rename and note: %s %s %s", got["2"].Result, got["3"].Result, stderr)
	}

	got, stderr = session(call(2, "list_notebooks", `{}`)+call(3, "search_notes", `{"query":"planted"}`)+call(4, "joplin_status", `{}`), victim...)
	if list := string(got["2"].Result); !strings.Contains(list, clients) || strings.Contains(list, scratch) {
		t.Fatalf("the Clients client after the rename and a restart sees the renamed notebook: %s", list)
	}
	if found := string(got["3"].Result); strings.Contains(found, "Planted") {
		t.Fatalf("the Clients client finds the planted note: %s", found)
	}
	if status := string(got["4"].Result); !strings.Contains(status, `"mismatches":[{"setting":"Clients","covers":["Clients"]}]`) {
		t.Fatalf("joplin_status does not report the mismatch: %s", status)
	}
	if !strings.Contains(stderr, "no longer names the notebooks it named") {
		t.Fatalf("the log does not report the mismatch: %s", stderr)
	}
	fi, err := os.Stat(filepath.Join(state, scopepin.FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pins file: %v %v", fi, err)
	}
	if di, err := os.Stat(state); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("state directory: %v %v", di, err)
	}
}
