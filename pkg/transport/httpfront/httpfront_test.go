package httpfront

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

func serve(t *testing.T, to Timeouts) string {
	t.Helper()
	e := New()
	e.POST("/echo", func(c echo.Context) error {
		b, _ := io.ReadAll(c.Request().Body)
		return c.String(http.StatusOK, string(b))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer("", e, to)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server closes conn within d while the
// client keeps trickling bytes from trickle (nil: stays silent).
func closedWithin(t *testing.T, conn net.Conn, d time.Duration, trickle string) bool {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, conn)
		close(closed)
	}()
	deadline := time.After(d)
	for i := 0; ; i++ {
		select {
		case <-closed:
			return true
		case <-deadline:
			return false
		case <-time.After(50 * time.Millisecond):
			if trickle != "" {
				conn.Write([]byte{trickle[i%len(trickle)]})
			}
		}
	}
}

func TestSlowlorisHeadersAreCutOff(t *testing.T) {
	addr := serve(t, Timeouts{ReadHeader: 300 * time.Millisecond, Read: 2 * time.Second, Idle: 2 * time.Second})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /echo HTTP/1.1\r\nHost: x\r\n"))
	if !closedWithin(t, conn, 1500*time.Millisecond, "X-Slow: aaaaaaaaaaaaaaaa") {
		t.Fatal("a client trickling headers kept its connection past ReadHeaderTimeout")
	}
}

func TestSlowBodyIsCutOff(t *testing.T) {
	addr := serve(t, Timeouts{ReadHeader: time.Second, Read: 400 * time.Millisecond, Idle: 2 * time.Second})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"))
	if !closedWithin(t, conn, 2*time.Second, "abcdef") {
		t.Fatal("a client trickling its body kept its connection past ReadTimeout")
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	addr := serve(t, Timeouts{ReadHeader: time.Second, Read: time.Second, Idle: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("request: %v %v", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	if strings.TrimSpace(string(body)) != "hi" {
		t.Fatalf("body %q", body)
	}
	if !closedWithin(t, conn, 1500*time.Millisecond, "") {
		t.Fatal("an idle kept-alive connection stayed open past IdleTimeout")
	}
}
