package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// The two tools through which a core server reaches the operations it does
// not list.
//
// They are the only MCP tools not made by registry.Define, and cannot be:
// they are not operations but a way of listing operations, local to one
// MCP server. find_tools answers from that server's own split of listed and
// unlisted tools (a --tools core setting of MCP; Actions routes every
// operation), and call_tool dispatches to the executor, so it cannot be one
// of the executor's operations, and has no output schema of its own (it
// answers with the result of whichever operation it ran, which the
// executor validates against that operation's schema, and authorises for
// the caller as if that tool had been called by name). A registry operation
// needs both. Nothing runs through them that does not run through the
// executor.
const (
	FindToolsName = "find_tools"
	CallToolName  = "call_tool"
	// Their human titles (annotations.title).
	FindToolsTitle = "Find more tools"
	CallToolTitle  = "Run one of the other tools"
)

// maxFound bounds the tools one find_tools answer describes with their
// input schemas.
const maxFound = 8

var (
	findToolsSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","maxLength":200}},"additionalProperties":false}`)
	callToolSchema  = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"arguments":{"type":"object"}},"required":["name"],"additionalProperties":false}`)
)

// foundTool is one operation a find_tools answer describes.
type foundTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// onDemandTools returns find_tools and call_tool over the operations of
// ops that are not listed: find_tools names them (with their input schemas
// when a query picks a few), call_tool runs any of ops through the executor,
// which validates and authorises it as a listed tool.
func onDemandTools(ex *executor.Executor, t registry.Transport, ops []registry.Operation, listed map[string]bool) []server.ServerTool {
	find := mcp.NewToolWithRawSchema(FindToolsName,
		"Find more tools, or a tool's full schema, by words (empty: all others); run them with call_tool.", findToolsSchema)
	find.Annotations = mcp.ToolAnnotation{Title: FindToolsTitle, ReadOnlyHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
	call := mcp.NewToolWithRawSchema(CallToolName, "Run a tool find_tools found.", callToolSchema)
	call.Annotations = mcp.ToolAnnotation{Title: CallToolTitle, DestructiveHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
	return []server.ServerTool{
		{Tool: find, Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Query string `json:"query"`
			}
			if err := decodeArgs(req, &in); err != nil {
				return ErrorResult(err), nil
			}
			out, _ := json.Marshal(struct {
				Tools []foundTool `json:"tools"`
			}{findTools(ops, listed, in.Query)})
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(out))}}, nil
		}},
		{Tool: call, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := decodeArgs(req, &in); err != nil {
				return ErrorResult(err), nil
			}
			who, _ := principal.From(ctx)
			// The activity log names the operation run, on the call_tool surface.
			out, isError := toolOutcome(ex.Call(activity.WithSurface(ctx, activity.SurfaceCallTool), who, t, in.Name, in.Arguments))
			if isError {
				return errorResult(out), nil
			}
			if op, ok := ex.Registry().Lookup(in.Name); ok && op.Media {
				if res, ok := mediaResult(out); ok {
					res.StructuredContent = nil // call_tool's own result has none
					return res, nil
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(out))}}, nil
		}},
	}
}

// findTools picks the operations of ops matching a word of query, in catalog
// order. An empty query lists the hidden ones by name and description;
// otherwise at most maxFound of all come with their full input schemas.
func findTools(ops []registry.Operation, listed map[string]bool, query string) []foundTool {
	words := strings.Fields(strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(query)))
	out := []foundTool{}
	for _, op := range ops {
		if len(words) == 0 && listed[op.Name] {
			continue
		}
		text := strings.ToLower(strings.ReplaceAll(op.Name, "_", " ") + " " + op.Description)
		if len(words) > 0 && !slices.ContainsFunc(words, func(w string) bool { return strings.Contains(text, w) }) {
			continue
		}
		f := foundTool{Name: op.Name, Description: op.Description}
		if len(words) > 0 {
			if len(out) == maxFound {
				break
			}
			f.InputSchema = op.InputSchema
		}
		out = append(out, f)
	}
	return out
}

// decodeArgs decodes a tool call's arguments into v; anything else than
// an object of the expected members is INVALID_ARGUMENT.
func decodeArgs(req mcp.CallToolRequest, v any) *domainerr.Error {
	args, derr := rawArgs(req)
	if derr != nil {
		return derr
	}
	if len(args) == 0 || string(args) == "null" {
		args = []byte(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return domainerr.New(domainerr.InvalidArgument, "arguments do not match the tool's input schema")
	}
	return nil
}

// leanBounds are the bounds leanInput drops, from these values up.
var leanBounds = map[string]float64{"maxLength": 256, "maxItems": 1000, "maximum": 1000}

// leanInput drops from an input schema the bounds that only guard against
// abuse (leanBounds: long strings, big arrays and numbers): the executor still
// enforces them and names them in its errors, and a model never needs them
// to choose or fill a tool; the inputs' descriptions; and the optional
// inputs named in hide. find_tools gives any tool's full schema.
// Everything else is kept as it is.
//
// It is the one place an adapter changes a schema the registry derived, and
// only what a core server lists: a lean schema is a lighter description of
// the same contract (everything it drops the executor checks against the
// registry's schema all the same), for a model that pays for every listed
// byte. The registry keeps one schema per operation, the contract every
// surface validates and documents against.
func leanInput(raw json.RawMessage, hide []string) json.RawMessage {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	dropBounds(v)
	if obj, ok := v.(map[string]any); ok {
		props, _ := obj["properties"].(map[string]any)
		required, _ := obj["required"].([]any)
		for _, name := range hide {
			if !slices.Contains(required, any(name)) {
				delete(props, name)
			}
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

func dropBounds(v any) {
	switch n := v.(type) {
	case map[string]any:
		for k, limit := range leanBounds {
			if f, ok := n[k].(float64); ok && f >= limit {
				delete(n, k)
			}
		}
		if _, ok := n["description"].(string); ok { // not a property named so
			delete(n, "description")
		}
		for k, c := range n {
			if k != "enum" && k != "default" {
				dropBounds(c)
			}
		}
	case []any:
		for _, c := range n {
			dropBounds(c)
		}
	}
}
