package mcpadapter

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// MaxInlineMedia bounds an image or audio file sent inside a tool result
// (decoded bytes). Clients cap what one result may hold (Claude Code
// refuses results over 25,000 tokens by default); a larger file is a
// resource_link to its joplin://resource/ URI, which the client reads when
// it wants the file.
const MaxInlineMedia = 512 << 10

// mediaField is where a Media operation's result holds its data, last
// (registry.Operation.Media).
var mediaField = []byte(`,"data_base64":"`)

// mediaHead is what a Media result says of its file.
type mediaHead struct {
	ID   string `json:"id"`
	Mime string `json:"mime"`
	Size int    `json:"size"`
}

// mediaResult renders the result out of a Media operation when it is an
// image or audio file: the file as an image or audio block (or, over
// MaxInlineMedia, a resource_link), beside the result without its data as
// text and structuredContent. ok is false for any other file, whose result
// stays JSON with its base64 inside. Only the head is decoded: the data is
// handed on as it lies in out.
func mediaResult(out json.RawMessage) (res *mcp.CallToolResult, ok bool) {
	at := bytes.LastIndex(out, mediaField)
	if at < 0 || !bytes.HasSuffix(out, []byte(`"}`)) {
		return nil, false
	}
	head := append(bytes.Clone(out[:at]), '}')
	var h mediaHead
	if json.Unmarshal(head, &h) != nil {
		return nil, false
	}
	kind, _, _ := strings.Cut(h.Mime, "/")
	if kind != "image" && kind != "audio" {
		return nil, false
	}
	data := string(out[at+len(mediaField) : len(out)-2])
	var file mcp.Content
	switch {
	case h.Size > MaxInlineMedia:
		file = mcp.NewResourceLink("joplin://resource/"+h.ID, h.ID, "too large to send inside a result: read this resource", h.Mime)
	case kind == "image":
		file = mcp.NewImageContent(data, h.Mime)
	default:
		file = mcp.NewAudioContent(data, h.Mime)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(head)), file},
		StructuredContent: json.RawMessage(head),
	}, true
}
