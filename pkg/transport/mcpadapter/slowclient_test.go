package mcpadapter

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
)

// serveReal serves the real MCP handler behind httpfront's server with the
// given timeouts, as `notebridge mcp serve` wires it, on a real socket.
func serveReal(t *testing.T, to httpfront.Timeouts, cfg HTTPConfig) string {
	t.Helper()
	tokenPath := filepath.Join(t.TempDir(), "mcp-token")
	if err := os.WriteFile(tokenPath, []byte(testToken), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := bearer.NewTokenFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Token, cfg.MaxBodyBytes = tf, 1<<20
	h, err := NewHTTPHandler(NewServer(testExecutor(t), registry.MCPHTTP, "test"), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpfront.NewServer("", h, to)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedByServer reports whether the server closes conn while the client
// keeps trickling bytes from trickle (empty: stays silent). within only
// guards against a hang: every bound the server applies is far shorter.
func closedByServer(conn net.Conn, trickle string, within time.Duration) bool {
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, conn)
		close(closed)
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(within)
	for i := 0; ; i++ {
		select {
		case <-closed:
			return true
		case <-deadline:
			return false
		case <-tick.C:
			if trickle != "" {
				conn.Write([]byte{trickle[i%len(trickle)]})
			}
		}
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestMCPHandlerCutsOffSlowClients runs the slow-client cases against the
// real MCP handler: trickled headers, a trickled body on an authenticated
// POST /mcp, an idle kept-alive connection after initialize, and an
// authenticated GET stream that stays silent.
func TestMCPHandlerCutsOffSlowClients(t *testing.T) {
	to := httpfront.Timeouts{ReadHeader: 300 * time.Millisecond, Read: 400 * time.Millisecond, Idle: 300 * time.Millisecond}
	addr := serveReal(t, to, HTTPConfig{StreamIdleTimeout: 300 * time.Millisecond})
	auth := "Authorization: Bearer " + testToken + "\r\n"

	conn := dial(t, addr)
	conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: localhost\r\n"))
	if !closedByServer(conn, "X-Slow: aaaaaaaa", 10*time.Second) {
		t.Error("trickled headers kept the connection open")
	}

	conn = dial(t, addr)
	conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"))
	if !closedByServer(conn, `{"jsonrpc"`, 10*time.Second) {
		t.Error("a trickled body kept the connection open")
	}

	conn = dial(t, addr)
	body := initBody("2025-06-18")
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", auth, len(body), body)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("initialize: %v %v", resp, err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	io.Copy(io.Discard, resp.Body)
	if !closedByServer(conn, "", 10*time.Second) {
		t.Error("an idle kept-alive connection stayed open")
	}

	conn = dial(t, addr)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang guard
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: localhost\r\n%sAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", auth, sid)
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %v %v", resp, err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Errorf("a silent stream was not ended by the server: %v", err)
	}
}
