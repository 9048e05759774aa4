package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
)

// The stdio fast path serves a plain tools/call (see parseToolCall) by
// calling the executor on the arguments as they lie in the input line and
// streaming the response to stdout. mcp-go would decode the message several
// times and build the response in memory: for a 25 MiB resource, hundreds
// of MiB. Its output is byte-for-byte what mcp-go's path writes for the same
// line (TestFastPathMatchesMCPGo); every other message takes mcp-go's path.

// fastPath serves plain tools/call messages of one stdio session.
type fastPath struct {
	s   *Server
	out *stdioOut
}

// accept returns the plain tools/call msg holds if it names one of the
// server's tools; otherwise mcp-go must handle msg. It reads msg once (see
// parseToolCall). A nil fastPath accepts nothing.
func (f *fastPath) accept(msg []byte) (toolCall, bool) {
	if f == nil {
		return toolCall{}, false
	}
	call, ok := parseToolCall(msg)
	return call, ok && f.s.tools[call.name]
}

// serve answers an accepted call; ctx is the call's, from the session's
// inflight.start, and done ends it. A notifications/cancelled naming the
// call's id cancels it, and the call gets no response.
func (f *fastPath) serve(ctx context.Context, call toolCall, c *request, done func()) {
	defer done()
	out, isError, panicked := f.call(ctx, call)
	if c.cancelled.Load() {
		return
	}
	if panicked != nil {
		// What mcp-go's recovery middleware (server.WithRecovery) answers.
		f.out.message(mcp.JSONRPCError{
			JSONRPC: mcp.JSONRPC_VERSION,
			ID:      mcp.NewRequestId(call.id),
			Error:   mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, fmt.Sprintf("panic recovered in %s tool handler: %v", call.name, panicked), nil),
		})
		return
	}
	if f.s.media[call.name] && !isError {
		if res, ok := mediaResult(out); ok {
			// What mcp-go's path answers for the same call (handler).
			f.out.message(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(call.id), res))
			return
		}
	}
	f.out.toolResponse(call.idJSON, out, isError)
}

func (f *fastPath) call(ctx context.Context, c toolCall) (out json.RawMessage, isError bool, panicked any) {
	defer func() { panicked = recover() }()
	who, _ := principal.From(ctx)
	out, isError = toolOutcome(f.s.ex.CallScanned(ctx, who, f.s.t, c.name, c.args))
	return out, isError, nil
}

// toolCall is a plain tools/call request located in a message's bytes.
type toolCall struct {
	id     any    // the request id as mcp-go decodes it
	idJSON []byte // the id as mcp-go encodes it in the response
	name   string
	args   jsonscan.Value // the arguments object: a sub-slice of the message
}

// parseToolCall finds a plain tools/call in msg: a JSON object with exactly
// the members jsonrpc "2.0", id (a string or a number), method
// "tools/call" and params, whose params has exactly the members name (a
// string), arguments (an object) and optionally _meta holding at most a
// progressToken. Member names must match exactly and appear once. Anything
// else (other _meta fields such as a 2026-07-28 protocol version, task, a
// notification, a response, other members, letter-case variants mcp-go
// would also accept, invalid JSON) reports false.
// msg is read once, by a jsonscan.Scanner that validates it and measures
// the arguments' depth on the way; only the short values are decoded, and
// the arguments are neither copied nor read again before the executor's
// schema validator decodes them.
func parseToolCall(msg []byte) (toolCall, bool) {
	var (
		c               toolCall
		version, method string
		seen            int
	)
	once := func(bit int) bool {
		dup := seen&bit != 0
		seen |= bit
		return !dup
	}
	s := jsonscan.NewScanner(msg)
	// short decodes the next value, which must start with one of first.
	short := func(first string, into any) bool {
		v, ok := s.Value()
		return ok && strings.IndexByte(first, v.Bytes()[0]) >= 0 && json.Unmarshal(v.Bytes(), into) == nil
	}
	ok := s.Object(func(raw []byte, valid bool) bool {
		switch memberName(raw, valid) {
		case "jsonrpc":
			return once(1) && short(`"`, &version)
		case "id":
			return once(2) && short(`"-0123456789`, &c.id)
		case "method":
			return once(4) && short(`"`, &method)
		case "params":
			return once(8) && parseParams(s, &c)
		}
		return false
	}) && s.End()
	if !ok || seen != 15 || version != mcp.JSONRPC_VERSION || method != string(mcp.MethodToolsCall) {
		return toolCall{}, false
	}
	var err error
	if c.idJSON, err = json.Marshal(mcp.NewRequestId(c.id)); err != nil {
		return toolCall{}, false
	}
	return c, true
}

// parseParams reads the params object of a plain tools/call into c.
func parseParams(s *jsonscan.Scanner, c *toolCall) bool {
	seen := 0
	once := func(bit int) bool {
		dup := seen&bit != 0
		seen |= bit
		return !dup
	}
	ok := s.Object(func(raw []byte, valid bool) bool {
		switch memberName(raw, valid) {
		case "name":
			v, ok := s.Value()
			return once(1) && ok && v.Bytes()[0] == '"' && json.Unmarshal(v.Bytes(), &c.name) == nil
		case "arguments":
			v, ok := s.Value()
			c.args = v
			return once(2) && ok && v.Bytes()[0] == '{'
		case "_meta":
			// What clients send to ask for progress; mcp-go reads nothing
			// else from it for a tools/call of the protocol versions that
			// have initialize, and this server sends no progress.
			metaSeen := false
			return once(4) && s.Object(func(raw []byte, valid bool) bool {
				dup := metaSeen
				metaSeen = true
				_, ok := s.Value()
				return ok && memberName(raw, valid) == "progressToken" && !dup
			})
		}
		return false
	})
	return ok && seen&3 == 3
}

// memberName decodes a member name given as the raw bytes between its
// quotes; "" when it is not a valid JSON string.
func memberName(raw []byte, valid bool) string {
	if !valid {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return ""
	}
	return s
}
