package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKCoreProfile drives `notebridge mcp stdio --tools core` with the
// official Go SDK client: the catalog is the core tools plus find_tools
// and call_tool; the lean agent task (create, search, read, edit one line
// and tag by a new title, read again) runs on core tools alone; and a
// trashed note is restored through find_tools and call_tool.
func TestGoSDKCoreProfile(t *testing.T) {
	args := append([]string{"mcp", "stdio", "--tools", "core", "--state-dir", t.TempDir()}, fakeJoplinArgs(t)...)
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "notebridge-gosdk-core", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "call_tool,create_note,edit_note,find_tools,get_note,list_notes,search" {
		t.Fatalf("core tools: %s", got)
	}
	call := func(name string, args map[string]any, out any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("%s: %s", name, text)
		}
		if out != nil {
			reflect.ValueOf(out).Elem().SetZero() // omitted fields (trashed) start empty
			if err := json.Unmarshal([]byte(text), out); err != nil {
				t.Fatalf("%s: %s: %v", name, text, err)
			}
		}
		return text
	}

	var nb struct{ ID string }
	call("call_tool", map[string]any{"name": "create_notebook", "arguments": map[string]any{"title": "Gardens"}}, &nb)
	var note struct {
		ID          string `json:"id"`
		Body        string `json:"body"`
		UpdatedTime int64  `json:"updated_time"`
		Tags        []struct {
			Title string `json:"title"`
		} `json:"tags"`
		Trashed bool `json:"trashed"`
	}
	call("create_note", map[string]any{"notebook_id": nb.ID, "title": "Roadmap", "body": "- Plant the river beds\n"}, &note)
	// The index may still be building: then the fake Joplin's search
	// answers, which (like Joplin's) misses new notes.
	if text := call("search", map[string]any{"query": "Roadmap"}, nil); !strings.Contains(text, `"results":[`) {
		t.Fatalf("search: %s", text)
	}
	call("get_note", map[string]any{"id": note.ID}, &note)
	var edit struct {
		Status       string `json:"status"`
		ReceiptID    string `json:"receipt_id"`
		LinesChanged int    `json:"lines_changed"`
	}
	call("edit_note", map[string]any{"id": note.ID, "updated_time": note.UpdatedTime, "changes": []map[string]any{
		{"op": "replace", "find": "river beds", "text": "river beds and the hedges"},
		{"op": "tag", "target": "planning", "create": true},
	}}, &edit)
	if edit.Status != "applied" || edit.ReceiptID == "" || edit.LinesChanged != 2 {
		t.Fatalf("edit_note: %+v", edit)
	}
	call("get_note", map[string]any{"id": note.ID, "include": []string{"tags"}}, &note)
	if note.Body != "- Plant the river beds and the hedges\n" || len(note.Tags) != 1 || note.Tags[0].Title != "planning" {
		t.Fatalf("after the edit: %+v", note)
	}

	// A non-core tool: trash the note, find restore_note, call it.
	call("call_tool", map[string]any{"name": "trash_note", "arguments": map[string]any{"id": note.ID}}, nil)
	if call("get_note", map[string]any{"id": note.ID}, &note); !note.Trashed {
		t.Fatalf("not trashed: %+v", note)
	}
	found := call("find_tools", map[string]any{"query": "restore"}, nil)
	if !strings.Contains(found, `"name":"restore_note"`) || !strings.Contains(found, `"input_schema"`) {
		t.Fatalf("find_tools restore: %s", found)
	}
	call("call_tool", map[string]any{"name": "restore_note", "arguments": map[string]any{"id": note.ID}}, nil)
	call("get_note", map[string]any{"id": note.ID}, &note)
	if note.Trashed {
		t.Fatalf("still trashed: %+v", note)
	}
	// call_tool validates like a listed tool.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "restore_note", "arguments": map[string]any{"id": "nope"}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "INVALID_ARGUMENT") {
		t.Fatalf("call_tool with a bad id: %v %+v", err, res)
	}
}
