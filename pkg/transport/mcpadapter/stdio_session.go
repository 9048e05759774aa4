package mcpadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// stdioSession is the one client session of a stdio connection, so that
// server notifications (resources/list_changed) reach the client: mcp-go
// delivers them only to registered sessions.
type stdioSession struct {
	id          string
	ch          chan mcp.JSONRPCNotification
	initialized atomic.Bool
}

func (s *stdioSession) Initialize()       { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool { return s.initialized.Load() }
func (s *stdioSession) SessionID() string { return s.id }

func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.ch }

// openStdioSession registers a session with s and writes its notifications
// to w until the returned close function runs. ctx carries the session.
func openStdioSession(ctx context.Context, s *server.MCPServer, w *stdioOut) (context.Context, func()) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	sess := &stdioSession{id: "stdio-" + hex.EncodeToString(b[:]), ch: make(chan mcp.JSONRPCNotification, 16)}
	if err := s.RegisterSession(ctx, sess); err != nil {
		w.log.Error("register stdio session", "err", err)
		return ctx, func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case n := <-sess.ch:
				w.message(n)
			case <-stop:
				return
			}
		}
	}()
	// The channel stays open: a sender that found the session before it
	// was unregistered must not panic.
	return s.WithContext(ctx, sess), func() {
		s.UnregisterSession(ctx, sess.id)
		close(stop)
		<-done
	}
}
