package scenarios

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/joplin"
)

// MCPResources checks notes as MCP resources through c: the templates,
// resources/list paged newest first without trashed notes, and
// resources/read of a note (Markdown with a header), of an attachment, and
// of a trashed note (not found).
func MCPResources(t *testing.T, c *client.Client, env Env) {
	ctx := context.Background()
	tpl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tpl.ResourceTemplates) != 2 {
		t.Fatalf("templates: %v, %v", tpl, err)
	}
	nb := Folder(t, env, unique(t, "Resources"), "")
	att := createResource(t, env, map[string]any{"title": unique(t, "pic"), "filename": "pic.png", "data_base64": b64(pngBytes(t))})
	gone := SeedNote(t, env, nb, "Gone", "bye")
	trashDirect(t, env, "notes", gone)
	newest := SeedNote(t, env, nb, "Newest", "Hello ![](:/"+att.ID+")\n")

	first, err := c.ListResourcesByPage(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(first.Resources) == 0 || first.Resources[0].URI != "joplin://note/"+newest || first.Resources[0].Name != "Newest" {
		t.Fatalf("first page: %v", err)
	}
	all, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := joplin.ListAll[struct {
		ID string `json:"id"`
	}](ctx, env.Joplin, "/notes", url.Values{"fields": {"id"}}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Resources) != len(live) {
		t.Fatalf("listed %d resources, Joplin has %d live notes", len(all.Resources), len(live))
	}
	for _, r := range all.Resources {
		if r.URI == "joplin://note/"+gone {
			t.Fatal("a trashed note is listed")
		}
	}
	if len(live) > 50 && first.NextCursor == "" {
		t.Fatal("no next cursor past the first page")
	}

	read := func(uri string) (*mcp.ReadResourceResult, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		return c.ReadResource(ctx, req)
	}
	res, err := read("joplin://note/" + newest)
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("read note: %v", err)
	}
	text, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || text.MIMEType != "text/markdown" || !strings.HasPrefix(text.Text, "---\ntitle: \"Newest\"\nid: "+newest+"\n") ||
		!strings.HasSuffix(text.Text, "\n---\n\nHello ![](:/"+att.ID+")\n") {
		t.Fatalf("note resource: %#v", res.Contents[0])
	}
	// Resource not found is -32002 in the MCP specification, not -32603.
	if _, err := read("joplin://note/" + gone); !errors.Is(err, mcp.ErrResourceNotFound) || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Fatalf("trashed note read: %v", err)
	}
	if _, err := read("joplin://note/" + joplin.NewID()); !errors.Is(err, mcp.ErrResourceNotFound) {
		t.Fatalf("a missing note read: %v", err)
	}
	if _, err := read("joplin://resource/" + joplin.NewID()); !errors.Is(err, mcp.ErrResourceNotFound) {
		t.Fatalf("a missing attachment read: %v", err)
	}
	res, err = read("joplin://resource/" + att.ID)
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("read attachment: %v", err)
	}
	blob, ok := res.Contents[0].(mcp.BlobResourceContents)
	data, _ := base64.StdEncoding.DecodeString(blob.Blob)
	if !ok || blob.MIMEType != "image/png" || string(data) != string(pngBytes(t)) {
		t.Fatalf("attachment resource: %#v", res.Contents[0])
	}
}
