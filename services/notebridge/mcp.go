package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/httpauth"
	"github.com/notebridge/notebridge/pkg/httpfront"
	"github.com/notebridge/notebridge/pkg/mcpadapter"
	"github.com/notebridge/notebridge/pkg/registry"
)

// runStdio serves MCP over stdin/stdout. It opens no listener and needs no
// bearer token; stdout carries protocol messages only, logs go to stderr.
func runStdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, a, err := setup("mcp stdio", args, stderr, false, nil)
	if err != nil {
		return err
	}
	a.reportJoplin(ctx, c.JoplinTokenFile, false) // stdio opens no socket until a call
	srv := mcpadapter.NewServer(a.exec, registry.MCPStdio, version)
	return mcpadapter.ServeStdio(ctx, srv, stdin, stdout, int(c.MaxRequestBytes)+1<<20, a.log)
}

// runMCPServe serves MCP Streamable HTTP with health routes until ctx ends.
func runMCPServe(ctx context.Context, args []string, stderr io.Writer) error {
	c, a, err := setup("mcp serve", args, stderr, true, nil)
	if err != nil {
		return err
	}
	l, err := mcpListener(c, a, stderr)
	if err != nil {
		return err
	}
	a.reportJoplin(ctx, c.JoplinTokenFile, true)
	return serveAll(ctx, l)
}

// listener is one HTTP surface ready to serve.
type listener struct {
	name string
	ln   net.Listener
	srv  *http.Server
}

// mcpListener binds MCP Streamable HTTP (plus health routes) on c.Listen.
func mcpListener(c *config, a *app, stderr io.Writer) (listener, error) {
	tokenPath, err := ensureTokenFile(c.MCPTokenFile, c.StateDir, "mcp-token", stderr)
	if err != nil {
		return listener{}, err
	}
	c.MCPTokenFile = tokenPath
	token, err := httpauth.NewTokenFile(tokenPath)
	if err != nil {
		return listener{}, fmt.Errorf("MCP %w", err)
	}
	srv := mcpadapter.NewServer(a.exec, registry.MCPHTTP, version)
	h, err := mcpadapter.NewHTTPHandler(srv, mcpadapter.HTTPConfig{
		Token:          token,
		AllowedOrigins: strings.Split(c.AllowedOrigins, ","),
		MaxBodyBytes:   c.MaxRequestBytes,
		Ready:          a.joplin.Ping,
	}, a.log)
	if err != nil {
		return listener{}, err
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return listener{}, fmt.Errorf("listen for MCP: %w", err)
	}
	a.log.Info("serving MCP Streamable HTTP", "addr", ln.Addr().String(), "path", mcpadapter.Path)
	return listener{name: "mcp", ln: ln, srv: httpfront.NewServer(c.Listen, h, c.timeouts())}, nil
}

// serveAll serves every listener until ctx ends or one fails, then shuts
// all of them down gracefully.
func serveAll(ctx context.Context, ls ...listener) error {
	errc := make(chan error, len(ls))
	for _, l := range ls {
		go func() {
			if err := l.srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s listener: %w", l.name, err)
			}
		}()
	}
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, l := range ls {
		_ = l.srv.Shutdown(sctx)
	}
	return err
}
