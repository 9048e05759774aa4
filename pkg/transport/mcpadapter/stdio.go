package mcpadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/core/principal"
)

// MaxStdioMessage bounds one JSON-RPC line on stdin.
const MaxStdioMessage = 24 << 20

// ServeStdio exchanges newline-delimited JSON-RPC messages: one message per
// input line (a final line without a newline included) and one response per
// output line, written whole under a lock. At EOF it waits for in-flight
// calls to finish, then returns nil. Cancelling ctx cancels in-flight calls.
// Nothing but protocol messages is ever written to out. Every call is made
// as the stdio owner (principal.Stdio): whoever started the process.
//
// A plain tools/call (see parseToolCall) goes straight to the executor,
// with its arguments left in the input line, and its response is streamed
// to out; the bytes written are the ones mcp-go's path would write. Every
// other message goes to mcp-go.
func ServeStdio(ctx context.Context, s *Server, in io.Reader, out io.Writer, maxLine int, log *slog.Logger) error {
	return serveStdio(principal.With(ctx, principal.Stdio()), s, in, out, maxLine, log, true)
}

// ServeStdioAs is ServeStdio for the owner limited by --notebooks: every
// call is made as who.
func ServeStdioAs(ctx context.Context, who principal.Principal, s *Server, in io.Reader, out io.Writer, maxLine int, log *slog.Logger) error {
	return serveStdio(principal.With(ctx, who), s, in, out, maxLine, log, true)
}

// serveStdio is ServeStdio; withFastPath false sends every message to s,
// which tests compare the fast path against.
func serveStdio(ctx context.Context, s *Server, in io.Reader, out io.Writer, maxLine int, log *slog.Logger, withFastPath bool) error {
	if _, ok := principal.From(ctx); !ok {
		ctx = principal.With(ctx, principal.Stdio())
	}
	r := bufio.NewReaderSize(in, 64<<10)
	var wg sync.WaitGroup
	w := &stdioOut{bw: bufio.NewWriterSize(out, 64<<10), log: log}
	calls := newInflight()
	ctx, closeSession := openStdioSession(ctx, s.mcp, w)
	defer closeSession()
	var fast *fastPath
	if withFastPath {
		fast = &fastPath{s: s, out: w}
	}
	for {
		line, tooLong, rerr := readLine(r, maxLine)
		if tooLong {
			w.message(errorResponse(-32600, "message exceeds the size limit"))
		} else if len(bytes.TrimSpace(line)) > 0 {
			msg := json.RawMessage(line)
			if call, ok := fast.accept(msg); ok {
				// Registered before the next line is read, so a
				// cancellation that follows always finds it.
				callCtx, c, done := calls.start(ctx, call.id)
				wg.Add(1)
				go func() {
					defer wg.Done()
					fast.serve(callCtx, call, c, done)
				}()
			} else if isBatch(msg) {
				w.message(errorResponse(mcp.INVALID_REQUEST, batchError))
			} else if derr, deep := tooDeep(msg); deep {
				w.message(errorResponse(mcp.INVALID_REQUEST, string(derr.Code)+": "+derr.Message))
			} else if isInitialize(msg) {
				// The handshake is answered before any later line is read,
				// so no response can overtake it.
				if resp := s.HandleMessage(ctx, msg); resp != nil {
					w.message(resp)
				}
			} else {
				// A cancellation is applied in reading order; mcp-go still
				// receives it, for its hooks.
				calls.cancelFrom(msg)
				wg.Add(1)
				go func() {
					defer wg.Done()
					handleMessage(ctx, s.mcp, msg, calls, w)
				}()
			}
		}
		if rerr != nil {
			wg.Wait()
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
	}
}

// handleMessage passes msg to mcp-go and writes its response, unless msg
// is a request that a notifications/cancelled cancelled meanwhile.
func handleMessage(ctx context.Context, s *server.MCPServer, msg json.RawMessage, calls *inflight, w *stdioOut) {
	if id, ok := requestID(msg); ok {
		var c *request
		var done func()
		ctx, c, done = calls.start(ctx, id)
		defer done()
		resp := s.HandleMessage(ctx, msg)
		if resp != nil && !c.cancelled.Load() {
			w.message(resp)
		}
		return
	}
	if resp := s.HandleMessage(ctx, msg); resp != nil {
		w.message(resp)
	}
}

// stdioOut writes whole protocol lines to stdout, one at a time.
type stdioOut struct {
	mu  sync.Mutex
	bw  *bufio.Writer
	log *slog.Logger
}

// message writes msg encoded by json.Marshal.
func (o *stdioOut) message(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		o.log.Error("encode response", "err", err)
		return
	}
	o.line(func(w *bufio.Writer) { w.Write(b) })
}

// toolResponse streams the JSON-RPC response to request id (encoded)
// carrying a tool result whose text block is out, exactly as json.Marshal
// encodes mcp-go's response holding Result(out), or errorResult(out) when
// isError: a success also carries out as structuredContent, an error does
// not. Nothing the size of out is allocated. out is valid JSON: the
// executor's result (Executor.Call checks it) or an encoded domain error.
func (o *stdioOut) toolResponse(id []byte, out json.RawMessage, isError bool) {
	o.line(func(w *bufio.Writer) {
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(id)
		w.WriteString(`,"result":{"content":[{"type":"text","text":"`)
		writeStringBody(w, out)
		w.WriteString(`"}],`)
		if isError {
			w.WriteString(`"isError":true}}`)
			return
		}
		w.WriteString(`"structuredContent":`)
		writeCompact(w, out)
		w.WriteString(`}}`)
	})
}

// line writes one line with fn and flushes it, under the lock.
func (o *stdioOut) line(fn func(*bufio.Writer)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fn(o.bw)
	o.bw.WriteByte('\n')
	if err := o.bw.Flush(); err != nil {
		o.log.Error("write stdout", "err", err)
	}
}

// readLine reads one line without its terminator. A line longer than max is
// consumed and discarded, and tooLong is set. Fragments are kept as read
// and joined once at the end, so a large message costs about twice its
// size in allocations and its final buffer is exact.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var frags [][]byte
	total := 0
	for {
		chunk, e := r.ReadSlice('\n')
		if !tooLong {
			if total+len(chunk) > max+1 {
				tooLong, frags = true, nil
			} else {
				frags = append(frags, bytes.Clone(chunk))
				total += len(chunk)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return nil, true, e
		}
		if len(frags) == 1 {
			line = frags[0]
		} else {
			line = make([]byte, 0, total)
			for _, f := range frags {
				line = append(line, f...)
			}
		}
		return bytes.TrimRight(line, "\r\n"), false, e
	}
}

func isInitialize(msg []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return bytes.Contains(msg, []byte(`"initialize"`)) && json.Unmarshal(msg, &m) == nil && m.Method == "initialize"
}

type rpcError struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func errorResponse(code int, msg string) rpcError {
	e := rpcError{JSONRPC: "2.0"}
	e.Error.Code, e.Error.Message = code, msg
	return e
}
