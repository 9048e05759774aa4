package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/notebridge/notebridge/pkg/principal"
)

// The stdio fast path serves a plain tools/call (see parseToolCall) by
// calling the executor on the arguments as they lie in the input line and
// streaming the response to stdout. mcp-go would decode the message several
// times and build the response in memory: for a 25 MiB resource, hundreds
// of MiB. Its output is byte-for-byte what mcp-go's path writes for the same
// line (TestFastPathMatchesMCPGo); every other message takes mcp-go's path.

// fastPath serves plain tools/call messages of one stdio session.
type fastPath struct {
	s     *Server
	out   *stdioOut
	calls *inflight // the session's running requests, shared with mcp-go's path
}

// serve answers msg if it is a plain tools/call of one of the server's
// tools, and reports whether it did; otherwise mcp-go must handle msg.
func (f *fastPath) serve(ctx context.Context, msg []byte) bool {
	call, ok := parseToolCall(msg)
	if !ok || !f.s.tools[call.name] {
		return false
	}
	// A notifications/cancelled naming the id cancels the call, and the
	// call gets no response.
	ctx, c, done := f.calls.start(ctx, call.id)
	defer done()

	out, isError, panicked := f.call(ctx, call)
	if c.cancelled.Load() {
		return true
	}
	if panicked != nil {
		// What mcp-go's recovery middleware (server.WithRecovery) answers.
		f.out.message(mcp.JSONRPCError{
			JSONRPC: mcp.JSONRPC_VERSION,
			ID:      mcp.NewRequestId(call.id),
			Error:   mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, fmt.Sprintf("panic recovered in %s tool handler: %v", call.name, panicked), nil),
		})
		return true
	}
	f.out.toolResponse(call.idJSON, out, isError)
	return true
}

func (f *fastPath) call(ctx context.Context, c toolCall) (out json.RawMessage, isError bool, panicked any) {
	defer func() { panicked = recover() }()
	who, _ := principal.From(ctx)
	out, isError = callTool(ctx, f.s.ex, who, f.s.t, c.name, c.args)
	return out, isError, nil
}

// toolCall is a plain tools/call request located in a message's bytes.
type toolCall struct {
	id     any    // the request id as mcp-go decodes it
	idJSON []byte // the id as mcp-go encodes it in the response
	name   string
	args   json.RawMessage // the arguments object: a sub-slice of the message
}

// parseToolCall finds a plain tools/call in msg: a JSON object with exactly
// the members jsonrpc "2.0", id (a string or a number), method
// "tools/call" and params, whose params has exactly the members name (a
// string), arguments (an object) and optionally _meta holding at most a
// progressToken. Member names must match exactly and appear once. Anything
// else (other _meta fields such as a 2026-07-28 protocol version, task, a
// notification, a response, other members, letter-case variants mcp-go
// would also accept) reports false.
// Only the short values are decoded; the arguments are not copied.
func parseToolCall(msg []byte) (toolCall, bool) {
	if !json.Valid(msg) {
		return toolCall{}, false
	}
	var (
		c               toolCall
		version, method string
		params          []byte
		seen            int
	)
	once := func(bit int) bool {
		dup := seen&bit != 0
		seen |= bit
		return !dup
	}
	ok := eachMember(msg, func(key string, v []byte) bool {
		switch key {
		case "jsonrpc":
			return once(1) && v[0] == '"' && json.Unmarshal(v, &version) == nil
		case "id":
			return once(2) && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') && json.Unmarshal(v, &c.id) == nil
		case "method":
			return once(4) && v[0] == '"' && json.Unmarshal(v, &method) == nil
		case "params":
			params = v
			return once(8) && v[0] == '{'
		}
		return false
	})
	if !ok || seen != 15 || version != mcp.JSONRPC_VERSION || method != string(mcp.MethodToolsCall) {
		return toolCall{}, false
	}
	seen = 0
	ok = eachMember(params, func(key string, v []byte) bool {
		switch key {
		case "name":
			return once(1) && v[0] == '"' && json.Unmarshal(v, &c.name) == nil
		case "arguments":
			c.args = v
			return once(2) && v[0] == '{'
		case "_meta":
			// What clients send to ask for progress; mcp-go reads nothing
			// else from it for a tools/call of the protocol versions that
			// have initialize, and this server sends no progress.
			metaSeen := false
			return once(4) && eachMember(v, func(key string, _ []byte) bool {
				dup := metaSeen
				metaSeen = true
				return key == "progressToken" && !dup
			})
		}
		return false
	})
	if !ok || seen&3 != 3 {
		return toolCall{}, false
	}
	var err error
	if c.idJSON, err = json.Marshal(mcp.NewRequestId(c.id)); err != nil {
		return toolCall{}, false
	}
	return c, true
}

// eachMember calls fn with each member of the JSON object b (valid JSON,
// possibly surrounded by whitespace), in order, with the decoded name and
// the value's bytes. It stops and reports false when fn does, or when b is
// not an object or a name cannot be decoded.
func eachMember(b []byte, fn func(key string, v []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	if i = skipSpace(b, i+1); b[i] == '}' {
		return true
	}
	for {
		end := skipValue(b, i)
		key, ok := memberName(b[i:end])
		if !ok {
			return false
		}
		i = skipSpace(b, skipSpace(b, end)+1) // past the colon
		end = skipValue(b, i)
		if !fn(key, b[i:end]) {
			return false
		}
		if i = skipSpace(b, end); b[i] == '}' {
			return true
		}
		i = skipSpace(b, i+1) // past the comma
	}
}

func memberName(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]; b is valid
// JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && bytes.IndexByte([]byte(",}] \t\n\r"), b[i]) < 0 {
		i++
	}
	return i
}

// skipString returns the end of the JSON string starting at b[i]: the
// first quote after it not escaped by an odd run of backslashes.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}
