package mcpadapter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
)

// guard sits between the authenticated front door and mcp-go's Streamable
// HTTP server. It enforces what mcp-go leaves open: the session bounds,
// the Mcp-Session-Id rules of the Streamable HTTP transport (2025-06-18,
// "Session Management": a request without the header when one is required
// gets 400, an unknown or expired session 404), the bound and idle timeout
// of GET streams, no response for a cancelled request, and a clear error
// for a JSON-RPC batch. Requests of protocol version 2026-07-28, which has
// no sessions, pass through.
type guard struct {
	next       http.Handler // mcp-go's handler
	sessions   *sessions
	maxStreams int
	streamIdle time.Duration
	// rs and srv, set when OAuth is on, refuse a tools/call beyond the
	// token's scopes with HTTP 403 (see scopeRefusal).
	rs  *resourceserver.Server
	srv *Server
}

// The JSON-RPC error codes of session failures, as the reference
// TypeScript SDK answers them.
const (
	codeBadSession      = -32000
	codeSessionNotFound = -32001
)

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Method == http.MethodPost && r.Body != nil {
		// The front door has already read and bounded the body.
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if isBatch(body) {
			writeRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST, batchError, nil)
			return
		}
	}
	m, ok := peek(body)
	if !ok {
		if derr, deep := tooDeep(body); deep {
			writeRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST, string(derr.Code)+": "+derr.Message, derr)
			return
		}
	}
	if ok && g.scopeRefusal(w, r, m) {
		return
	}
	if !ok || isModern(r.Header, m) {
		// mcp-go answers a body that is not a JSON object (-32700).
		g.next.ServeHTTP(w, r)
		return
	}
	owner := credential(r.Header)
	if p, ok := principal.From(r.Context()); ok && p.Kind() == principal.OAuthGrant {
		// An OAuth grant owns its sessions across token refreshes.
		owner = "oauth:" + p.GrantID()
	}
	switch {
	case r.Method == http.MethodPost && m.Method == string(mcp.MethodInitialize):
		g.initialize(w, r, owner, m)
		return
	case r.Method != http.MethodPost && r.Method != http.MethodGet && r.Method != http.MethodDelete:
		g.next.ServeHTTP(w, r)
		return
	}
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		writeRPCError(w, http.StatusBadRequest, m.ID, codeBadSession, "Bad Request: Mcp-Session-Id header is required", nil)
		return
	}
	sess := g.sessions.begin(id, owner)
	if sess == nil {
		writeRPCError(w, http.StatusNotFound, m.ID, codeSessionNotFound, "Session not found", nil)
		return
	}
	defer g.sessions.end(sess)
	switch r.Method {
	case http.MethodGet:
		g.stream(w, r, sess)
	case http.MethodPost:
		g.post(w, r, sess, m, body)
	default:
		g.next.ServeHTTP(w, r)
	}
}

// initialize admits a new session within the bounds.
func (g *guard) initialize(w http.ResponseWriter, r *http.Request, owner string, m message) {
	res, derr := g.sessions.reserve(owner)
	if derr != nil {
		status := http.StatusTooManyRequests
		if derr.Details["limit"] == "sessions_total" {
			status = http.StatusServiceUnavailable
		}
		writeRPCError(w, status, m.ID, codeBadSession, derr.Message, derr)
		return
	}
	defer g.sessions.release(res)
	g.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reservationKey{}, res)))
}

// post serves a message of a live session. A notifications/cancelled
// aborts the request it names, which then gets no response.
func (g *guard) post(w http.ResponseWriter, r *http.Request, sess *session, m message, body []byte) {
	if sess.calls.cancelFrom(body) || m.ID == nil || m.Method == "" {
		g.next.ServeHTTP(w, r)
		return
	}
	var id any
	if json.Unmarshal(m.ID, &id) != nil {
		g.next.ServeHTTP(w, r)
		return
	}
	ctx, c, done := sess.calls.start(r.Context(), id)
	defer done()
	cw := &cancelAwareWriter{ResponseWriter: w, req: c}
	g.next.ServeHTTP(cw, r.WithContext(ctx))
	if !cw.wroteHeader && c.cancelled.Load() {
		// mcp-go writes nothing once the request's context ends: the
		// POST's event stream closes without a response.
		cw.WriteHeader(http.StatusOK)
	}
}

// stream serves a GET stream within the per-credential bound, and closes
// it once it has carried nothing for the idle timeout or its session ends.
func (g *guard) stream(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	closeStream, derr := g.sessions.openStream(sess, cancel, g.maxStreams)
	if derr != nil {
		writeRPCError(w, http.StatusTooManyRequests, nil, codeBadSession, derr.Message, derr)
		return
	}
	defer closeStream()
	iw := &idleWriter{ResponseWriter: w, idle: g.streamIdle, timer: time.AfterFunc(g.streamIdle, cancel)}
	defer iw.timer.Stop()
	g.next.ServeHTTP(iw, r.WithContext(ctx))
}

// reclaim removes mcp-go's state of an expired session, through the same
// DELETE a client would send.
func (g *guard) reclaim(id string) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, Path, nil)
	if err != nil {
		return
	}
	req.Header.Set(server.HeaderKeySessionID, id)
	g.next.ServeHTTP(&discardWriter{h: http.Header{}}, req)
}

// message is what the guard reads of a POST body.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string                     `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// peek decodes what the guard needs of body (empty for a GET or DELETE);
// ok is false for a body that is not a JSON object of the expected shape.
func peek(body []byte) (m message, ok bool) {
	if len(body) > 0 && json.Unmarshal(body, &m) != nil {
		return message{}, false
	}
	return m, true
}

// isModern reports a request of protocol version 2026-07-28 or later,
// decided as mcp-go decides it: by header or by _meta.
func isModern(h http.Header, m message) bool {
	if mcp.IsModernProtocol(h.Get(mcp.HeaderProtocolVersion)) {
		return true
	}
	var v string
	return json.Unmarshal(m.Params.Meta[mcp.MetaKeyProtocolVersion], &v) == nil && mcp.IsModernProtocol(v)
}

// credential identifies the bearer token a request authenticated with by
// its digest; the token itself is never kept.
func credential(h http.Header) string {
	tok, err := bearer.ParseBearer(h)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:8])
}

// writeRPCError answers with status and a JSON-RPC error; data, when set,
// is the domain error.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string, data *domainerr.Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcErr struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    *domainerr.Error `json:"data,omitempty"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{mcp.JSONRPC_VERSION, id, rpcErr{code, msg, data}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// cancelAwareWriter drops the response of a request cancelled before
// mcp-go starts to answer; the POST's event stream then closes empty.
type cancelAwareWriter struct {
	http.ResponseWriter
	req         *request
	wroteHeader bool
	suppress    bool
}

func (w *cancelAwareWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if w.req.cancelled.Load() {
		w.suppress = true
		h := w.Header()
		h.Del("Content-Length")
		h.Set("Content-Type", "text/event-stream")
		status = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *cancelAwareWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.suppress {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *cancelAwareWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *cancelAwareWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// idleWriter restarts a stream's idle timer on every write.
type idleWriter struct {
	http.ResponseWriter
	idle  time.Duration
	timer *time.Timer
}

func (w *idleWriter) Write(b []byte) (int, error) {
	w.timer.Reset(w.idle)
	return w.ResponseWriter.Write(b)
}

func (w *idleWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// discardWriter is the response writer of an internal request.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
