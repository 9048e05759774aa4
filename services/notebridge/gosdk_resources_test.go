package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKClientReadsNotesAsResources drives the built binary with the
// official Go SDK client over stdio and Streamable HTTP: it lists and reads
// notes as resources, reads the templates, calls fetch and the outline of
// get_note, reads an image attachment as an image block, and (stdio)
// receives resources/list_changed after a note write.
func TestGoSDKClientReadsNotesAsResources(t *testing.T) {
	joplinArgs := fakeJoplinArgs(t)
	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(binPath, append([]string{"mcp", "stdio"}, joplinArgs...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		checkResources(t, &mcp.CommandTransport{Command: cmd}, true)
	})
	t.Run("streamable http", func(t *testing.T) {
		addr, _, token := startMCPServe(t, joplinArgs...)
		checkResources(t, &mcp.StreamableClientTransport{
			Endpoint:   "http://" + addr + "/mcp",
			HTTPClient: &http.Client{Transport: bearerTransport{token: token}},
		}, false)
	})
}

func checkResources(t *testing.T, tr mcp.Transport, wantListChanged bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "notebridge-gosdk-test", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", name, err, res)
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var nb, note struct{ ID string }
	call("create_notebook", map[string]any{"title": "Go SDK resources " + rand.Text()[:8]}, &nb)
	call("create_note", map[string]any{"notebook_id": nb.ID, "title": "Outline me", "body": "# A\none\n## B\ntwo\n"}, &note)

	tpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) != 2 {
		t.Fatalf("templates: %v %v", tpl, err)
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) == 0 || list.Resources[0].URI != "joplin://note/"+note.ID || list.Resources[0].Name != "Outline me" {
		t.Fatalf("resources/list: %v %v", list, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "joplin://note/" + note.ID})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "text/markdown" ||
		!strings.HasPrefix(read.Contents[0].Text, "---\ntitle: \"Outline me\"\n") || !strings.HasSuffix(read.Contents[0].Text, "## B\ntwo\n") {
		t.Fatalf("resources/read: %v %v", read, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "joplin://note/0123456789abcdef0123456789abcdef"}); err == nil {
		t.Fatal("a missing note was read")
	}
	var fetched struct{ ID, Title, Text, URL string }
	call("fetch", map[string]any{"id": note.ID}, &fetched)
	if fetched.URL != "joplin://x-callback-url/openNote?id="+note.ID || fetched.Text != "# A\none\n## B\ntwo\n" {
		t.Fatalf("fetch: %+v", fetched)
	}
	var outline struct {
		Body    *string
		Outline []struct{ Text string }
	}
	call("get_note", map[string]any{"id": note.ID, "view": "outline"}, &outline)
	if outline.Body != nil || len(outline.Outline) != 2 || outline.Outline[1].Text != "B" {
		t.Fatalf("outline: %+v", outline)
	}
	// An image attachment comes back as an image block beside its
	// description, which validates without the data.
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	var made struct{ ID string }
	call("create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString(png), "filename": "dot.png", "title": "dot " + rand.Text()[:8]}, &made)
	img, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_resource_content", Arguments: map[string]any{"id": made.ID}})
	if err != nil || img.IsError || len(img.Content) != 2 {
		t.Fatalf("get_resource_content of an image: %v %+v", err, img)
	}
	block, ok := img.Content[1].(*mcp.ImageContent)
	if !ok || block.MIMEType != "image/png" || !bytes.Equal(block.Data, png) || strings.Contains(img.Content[0].(*mcp.TextContent).Text, "data_base64") {
		t.Fatalf("image block: %+v", img.Content)
	}
	if !wantListChanged {
		return
	}
	call("create_note", map[string]any{"notebook_id": nb.ID, "title": "Another"}, &note)
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no resources/list_changed after a note write")
	}
}
