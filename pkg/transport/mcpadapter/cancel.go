package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// A notifications/cancelled aborts the request it names, and the request
// gets no response: "Receivers of a cancellation notification SHOULD ...
// Not send a response for the cancelled request" (MCP 2025-06-18,
// utilities/cancellation). Work already sent to Joplin is not undone; an
// uncertain write is journaled by the executor like any other.

// inflight tracks the requests of one session that are running, keyed as
// mcp-go keys them (":" + the decoded id).
type inflight struct {
	mu    sync.Mutex
	calls map[string]*request
}

// request is one running request.
type request struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // set by a notifications/cancelled, before cancel
}

func newInflight() *inflight { return &inflight{calls: map[string]*request{}} }

func callKey(id any) string { return fmt.Sprintf(":%v", id) }

// start registers request id and returns its context, which ends when a
// notifications/cancelled names it; done unregisters it.
func (f *inflight) start(ctx context.Context, id any) (context.Context, *request, func()) {
	ctx, cancel := context.WithCancel(ctx)
	key, c := callKey(id), &request{cancel: cancel}
	f.mu.Lock()
	f.calls[key] = c
	f.mu.Unlock()
	return ctx, c, func() {
		f.mu.Lock()
		if f.calls[key] == c {
			delete(f.calls, key)
		}
		f.mu.Unlock()
		cancel()
	}
}

// cancelFrom cancels the running request a notifications/cancelled in msg
// names, if any, and reports whether msg was such a notification.
func (f *inflight) cancelFrom(msg []byte) bool {
	id, ok := cancelledID(msg)
	if !ok {
		return false
	}
	f.mu.Lock()
	c := f.calls[callKey(id)]
	f.mu.Unlock()
	if c != nil {
		c.cancelled.Store(true)
		c.cancel()
	}
	return true
}

// cancelledID returns the requestId of a notifications/cancelled message.
func cancelledID(msg []byte) (any, bool) {
	if !bytes.Contains(msg, []byte("notifications/cancelled")) {
		return nil, false
	}
	var n struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Method  string `json:"method"`
		Params  struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || n.JSONRPC != mcp.JSONRPC_VERSION || n.ID != nil ||
		n.Method != string(mcp.MethodNotificationCancelled) || n.Params.RequestID == nil {
		return nil, false
	}
	return n.Params.RequestID, true
}

// requestID returns the id of msg when it is a request (a method and an
// id), as mcp-go decodes it.
func requestID(msg []byte) (any, bool) {
	var m struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID == nil || m.Method == "" {
		return nil, false
	}
	return m.ID, true
}

// isBatch reports whether msg is a JSON array: a JSON-RPC batch, which no
// supported protocol version allows on this server.
func isBatch(msg []byte) bool {
	b := bytes.TrimLeft(msg, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// batchError is the message a batch is answered with.
const batchError = "batches are not supported: send one JSON-RPC message at a time"
