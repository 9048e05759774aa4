// Package mcpadapter turns the registry into MCP tools (mark3labs/mcp-go)
// and serves them over stdio and Streamable HTTP. It holds no operation list
// of its own: every tool comes from the registry and every call goes through
// the executor.
package mcpadapter

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// ServerName is the MCP server name advertised at initialize.
const ServerName = "notebridge"

// SupportedProtocolVersions lists the MCP protocol versions both transports
// negotiate, newest first.
func SupportedProtocolVersions() []string {
	return append([]string(nil), mcp.ValidProtocolVersions...)
}

// Server is one MCP server: the operations of an executor's registry that
// are exposed on one transport, as mcp-go tools. ServeStdio and
// NewHTTPHandler serve it; both reach the executor through it, and the
// stdio fast path answers a plain tools/call from it without mcp-go.
type Server struct {
	mcp   *server.MCPServer
	ex    *executor.Executor
	t     registry.Transport
	tools map[string]bool // the tools added to mcp, by name
	media map[string]bool // those whose results are files (registry.Operation.Media)
	// resources is set when the notes are served as MCP resources, by
	// notes.
	resources bool
	notes     *noteResources
}

// NewServer builds an MCP server exposing the operations of ex's registry
// that are exposed on transport t; its instructions describe the toolsets
// those operations come from.
//
// With a core list (Core), only the exposed operations it names are
// listed, with lean input schemas (leanInput), plus find_tools and
// call_tool, through which every other exposed operation stays reachable.
func NewServer(ex *executor.Executor, t registry.Transport, version string, options ...ServerOption) *Server {
	var cfg serverConfig
	for _, opt := range options {
		opt(&cfg)
	}
	ops := ex.Registry().Exposed(t)
	opts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions(Instructions(ops)),
	}
	var res *noteResources
	if servesResources(ex, t) {
		res = &noteResources{ex: ex, t: t}
		opts = append(opts, resourceOptions(res)...)
	}
	s := server.NewMCPServer(ServerName, version, opts...)
	if res != nil {
		res.addTemplates(s)
	}
	names := make(map[string]bool, len(ops))
	media := map[string]bool{}
	tools := make([]server.ServerTool, 0, len(ops))
	for _, op := range ops {
		if cfg.core != nil && !slices.Contains(cfg.core, op.Name) {
			continue
		}
		tool := Tool(op)
		if cfg.core != nil {
			tool.RawInputSchema = leanInput(op.InputSchema, cfg.hide[op.Name])
		}
		tools = append(tools, server.ServerTool{Tool: tool, Handler: handler(ex, t, op.Name, op.Media)})
		names[op.Name] = true
		if op.Media {
			media[op.Name] = true
		}
	}
	if cfg.core != nil && len(names) < len(ops) {
		tools = append(tools, onDemandTools(ex, t, ops, names)...)
	}
	s.AddTools(tools...)
	return &Server{mcp: s, ex: ex, t: t, tools: names, media: media, resources: res != nil, notes: res}
}

// ServerOption configures NewServer.
type ServerOption func(*serverConfig)

type serverConfig struct {
	core []string            // nil: list every exposed operation
	hide map[string][]string // optional inputs left out of core tools' listed schemas
}

// Core lists only the named operations (those exposed on the transport),
// and reaches the others through find_tools and call_tool. hide names, per
// tool, optional inputs its listed schema leaves out (the executor still
// takes them).
func Core(names []string, hide map[string][]string) ServerOption {
	return func(c *serverConfig) { c.core, c.hide = append([]string{}, names...), hide }
}

// HandleMessage answers one JSON-RPC message through mcp-go, as the
// transports do; ctx must carry the caller (principal.With) for a
// tools/call to run.
func (s *Server) HandleMessage(ctx context.Context, msg json.RawMessage) mcp.JSONRPCMessage {
	return s.mcp.HandleMessage(ctx, msg)
}

// Tool converts one operation to its MCP tool definition. Its human
// title is annotations.title (which clients and connector directories
// show, and which MCP clients fall back to without a top-level title); it
// is not repeated as the top-level title, to keep tools/list small.
func Tool(op registry.Operation) mcp.Tool {
	tool := mcp.NewToolWithRawSchema(op.Name, op.Description, op.InputSchema)
	tool.RawOutputSchema = op.OutputSchema
	tool.Annotations = Annotations(op)
	return tool
}

// Annotations carries the operation's title and derives the MCP hints
// from its effect. It leaves
// out a hint only where an absent one reads the same both under the MCP
// defaults (readOnly false, destructive true, idempotent false, openWorld
// true) and to a client that takes absent for false: readOnly and
// idempotent when false. destructiveHint is stated for every tool that is
// not read-only, so no client takes a write for harmless; for a read-only
// tool it is meaningless (MCP specification) and left out, as is
// idempotentHint. Joplin and OKF bundles are the user's own closed stores,
// so no tool is open-world.
func Annotations(op registry.Operation) mcp.ToolAnnotation {
	a := mcp.ToolAnnotation{Title: op.Title, OpenWorldHint: mcp.ToBoolPtr(false)}
	switch op.Effect {
	case registry.EffectRead:
		a.ReadOnlyHint = mcp.ToBoolPtr(true)
	case registry.EffectCreate:
		a.DestructiveHint = mcp.ToBoolPtr(false)
	default: // update, trash, delete-permanent: destructive, idempotent
		a.DestructiveHint = mcp.ToBoolPtr(true)
		a.IdempotentHint = mcp.ToBoolPtr(true)
	}
	return a
}

func handler(ex *executor.Executor, t registry.Transport, name string, media bool) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, derr := rawArgs(req)
		if derr != nil {
			return ErrorResult(derr), nil
		}
		// The transport put the caller in the context (ServeStdio, the HTTP
		// front door); without one the executor refuses the call.
		who, _ := principal.From(ctx)
		out, isError := toolOutcome(ex.Call(ctx, who, t, name, args))
		if isError {
			return errorResult(out), nil
		}
		if media {
			if res, ok := mediaResult(out); ok {
				return res, nil
			}
		}
		return Result(out), nil
	}
}

// rawArgs returns a tool call's arguments as sent, or re-encoded when the
// client library decoded them; none is empty.
func rawArgs(req mcp.CallToolRequest) (json.RawMessage, *domainerr.Error) {
	args := req.Params.RawArguments
	if len(args) == 0 && req.Params.Arguments != nil {
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return nil, domainerr.New(domainerr.InvalidArgument, "arguments cannot be encoded")
		}
		args = b
	}
	return args, nil
}

// toolOutcome turns what the executor answered into the encoded result
// object, or the encoded error object {"error": {...}} and true. The mcp-go
// handler and the stdio fast path both answer from it.
func toolOutcome(out json.RawMessage, derr *domainerr.Error) (json.RawMessage, bool) {
	if derr != nil {
		return errorJSON(derr), true
	}
	return out, false
}

// Result wraps an encoded result object; the same bytes serve as
// structuredContent and as the text block, so nothing is encoded twice.
func Result(out json.RawMessage) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(out))},
		StructuredContent: out,
	}
}

// ErrorResult renders a domain error as an isError tool result whose only
// content is a text block holding {"error": {...}}. It carries no
// structuredContent: the MCP specification requires structuredContent to
// conform to the tool's outputSchema, which describes success, and clients
// such as the TypeScript SDK v1 reject the whole result otherwise, so the
// agent would never see the error (docs/errors.md).
func ErrorResult(e *domainerr.Error) *mcp.CallToolResult {
	return errorResult(errorJSON(e))
}

func errorResult(body json.RawMessage) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(string(body))},
		IsError: true,
	}
}

// errorJSON encodes a domain error as {"error": {...}}.
func errorJSON(e *domainerr.Error) json.RawMessage {
	b, err := json.Marshal(struct {
		Error *domainerr.Error `json:"error"`
	}{e})
	if err != nil {
		b = []byte(`{"error":{"code":"INTERNAL","message":"internal error","retryable":false}}`)
	}
	return b
}
