package mcpadapter

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
)

// TestFilesAreSentAsFiles (issue 36 §4): an image or audio file a Media
// operation answers is an image or audio block beside the result without
// its data (text and structuredContent alike), over stdio (the fast path)
// and through call_tool; one larger than MaxInlineMedia is a
// resource_link; any other file, and a file answered by an operation that
// is not Media, stays JSON with its base64.
func TestFilesAreSentAsFiles(t *testing.T) {
	ex := diffExecutor(t)
	srv := NewServer(ex, registry.MCPStdio, "media")
	onDemand := NewServer(ex, registry.MCPStdio, "media", Core([]string{"echo"}, nil))
	type block struct {
		Type, Text, Data, MimeType, URI string
	}
	var answer struct {
		Result struct {
			Content           []block         `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	for _, c := range []struct {
		tool, kind string // kind: the second block's type, or "" for JSON only
	}{
		{"image", "image"}, {"audio", "audio"}, {"big_image", "resource_link"}, {"pdf", ""}, {"not_media", ""},
	} {
		for _, via := range []struct {
			name, line string
			srv        *Server
			structured bool
		}{
			{"tools/call", call("1", c.tool, `{}`), srv, true},
			{"call_tool", call("1", "call_tool", `{"name":"`+c.tool+`","arguments":{}}`), onDemand, false},
		} {
			fast, _ := both(t, via.srv, via.line+"\n")
			answer.Result.Content, answer.Result.StructuredContent = nil, nil
			if err := json.Unmarshal([]byte(fast), &answer); err != nil {
				t.Fatalf("%s via %s: %v: %s", c.tool, via.name, err, fast)
			}
			blocks := answer.Result.Content
			if len(blocks) == 0 || blocks[0].Type != "text" {
				t.Fatalf("%s via %s: %s", c.tool, via.name, fast)
			}
			if c.kind == "" {
				if len(blocks) != 1 || !strings.Contains(blocks[0].Text, `"data_base64":"AQID"`) {
					t.Errorf("%s via %s: want the JSON with its data, got %s", c.tool, via.name, fast)
				}
				continue
			}
			if len(blocks) != 2 || blocks[1].Type != c.kind || strings.Contains(blocks[0].Text, "data_base64") {
				t.Fatalf("%s via %s: want text without the data and a %s block, got %s", c.tool, via.name, c.kind, fast)
			}
			switch c.kind {
			case "resource_link":
				if blocks[1].URI != "joplin://resource/0123456789abcdef0123456789abcdef" || blocks[1].MimeType != "image/jpeg" || blocks[1].Data != "" {
					t.Errorf("%s via %s: link %+v", c.tool, via.name, blocks[1])
				}
			default:
				if blocks[1].Data != "AQID" || blocks[1].MimeType == "" {
					t.Errorf("%s via %s: file block %+v", c.tool, via.name, blocks[1])
				}
			}
			if got := string(answer.Result.StructuredContent); via.structured != (got != "") || strings.Contains(got, "data_base64") {
				t.Errorf("%s via %s: structuredContent %s", c.tool, via.name, got)
			}
		}
	}
}
