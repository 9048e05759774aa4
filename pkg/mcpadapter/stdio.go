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

	"github.com/mark3labs/mcp-go/server"
)

// MaxStdioMessage bounds one JSON-RPC line on stdin.
const MaxStdioMessage = 24 << 20

// ServeStdio exchanges newline-delimited JSON-RPC messages: one message per
// input line (a final line without a newline included) and one response per
// output line, written whole under a lock. At EOF it waits for in-flight
// calls to finish, then returns nil. Cancelling ctx cancels in-flight calls.
// Nothing but protocol messages is ever written to out.
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, maxLine int, log *slog.Logger) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		bw = bufio.NewWriter(out)
	)
	write := func(msg any) {
		b, merr := json.Marshal(msg)
		if merr != nil {
			log.Error("encode response", "err", merr)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		bw.Write(b)
		bw.WriteByte('\n')
		if ferr := bw.Flush(); ferr != nil {
			log.Error("write stdout", "err", ferr)
		}
	}
	for {
		line, tooLong, rerr := readLine(r, maxLine)
		if tooLong {
			write(errorResponse(-32600, "message exceeds the size limit"))
		} else if len(bytes.TrimSpace(line)) > 0 {
			msg := json.RawMessage(line)
			if isInitialize(msg) {
				// The handshake is answered before any later line is read,
				// so no response can overtake it.
				if resp := s.HandleMessage(ctx, msg); resp != nil {
					write(resp)
				}
			} else {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if resp := s.HandleMessage(ctx, msg); resp != nil {
						write(resp)
					}
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
