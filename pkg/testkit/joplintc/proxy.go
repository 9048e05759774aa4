//go:build integration

package joplintc

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP proxy with a stable local address. Its upstream can be
// switched (after a container restart) or cleared (refusing connections),
// and it can drop the connection after forwarding a matching request,
// before the answer: the ambiguous write outcome.
type Proxy struct {
	ln       net.Listener
	mu       sync.Mutex
	upstream string
	// dropAfter, when set, decides per request whether to forward it and
	// then drop the connection without the answer.
	dropAfter func(r *http.Request) bool
	dropped   atomic.Int32
	// before, when set, sees each request before it is forwarded and may
	// block to hold it.
	before func(r *http.Request)
}

// NewProxy listens on a loopback port and forwards to upstream.
func NewProxy(t *testing.T, upstream string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, upstream: upstream}
	t.Cleanup(func() { ln.Close() })
	go p.serve()
	return p
}

// Addr is the proxy's stable host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetUpstream switches the target; "" refuses new connections.
func (p *Proxy) SetUpstream(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstream = addr
}

// DropAfter installs (or, with nil, removes) the drop rule.
func (p *Proxy) DropAfter(rule func(r *http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropAfter = rule
}

// Before installs (or, with nil, removes) a hook that sees each request
// before it is forwarded; it may block to hold the request back.
func (p *Proxy) Before(hook func(r *http.Request)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.before = hook
}

// Dropped counts connections dropped by the rule.
func (p *Proxy) Dropped() int { return int(p.dropped.Load()) }

func (p *Proxy) serve() {
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(conn)
	}
}

// handle relays HTTP/1.1 exchanges one request at a time, so the drop
// rule applies to every request, kept-alive connections included.
func (p *Proxy) handle(client net.Conn) {
	defer client.Close()
	p.mu.Lock()
	upstream := p.upstream
	p.mu.Unlock()
	if upstream == "" {
		return // behaves like a refused connection: closed at once
	}
	server, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer server.Close()
	cr, sr := bufio.NewReader(client), bufio.NewReader(server)
	for {
		req, err := http.ReadRequest(cr)
		if err != nil {
			return
		}
		p.mu.Lock()
		hook := p.before
		p.mu.Unlock()
		if hook != nil {
			hook(req)
		}
		if err := req.Write(server); err != nil {
			return
		}
		resp, err := http.ReadResponse(sr, req)
		if err != nil {
			return
		}
		p.mu.Lock()
		rule := p.dropAfter
		p.mu.Unlock()
		if rule != nil && rule(req) {
			io.Copy(io.Discard, resp.Body) // Joplin has applied it
			resp.Body.Close()
			p.dropped.Add(1)
			return // drop without answering
		}
		err = resp.Write(client)
		resp.Body.Close()
		if err != nil {
			return
		}
	}
}
