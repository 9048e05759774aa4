package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/httpauth"
	"github.com/notebridge/notebridge/pkg/mcpadapter"
	"github.com/notebridge/notebridge/pkg/registry"
)

// runStdio serves MCP over stdin/stdout. It opens no listener and needs no
// bearer token; stdout carries protocol messages only, logs go to stderr.
func runStdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c config
	fs := flag.NewFlagSet("mcp stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindFlags(fs, &c, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	log := c.logger()
	a, err := newApp(&c, log)
	if err != nil {
		return err
	}
	srv := mcpadapter.NewServer(a.exec, registry.MCPStdio, version)
	return mcpadapter.ServeStdio(ctx, srv, stdin, stdout, int(c.MaxRequestBytes)+1<<20, log)
}

// runMCPServe serves MCP Streamable HTTP with health routes until ctx ends.
func runMCPServe(ctx context.Context, args []string, stderr io.Writer) error {
	var c config
	fs := flag.NewFlagSet("mcp serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindFlags(fs, &c, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	log := c.logger()
	a, err := newApp(&c, log)
	if err != nil {
		return err
	}
	tokenPath, err := ensureTokenFile(c.MCPTokenFile, c.StateDir, "mcp-token", stderr)
	if err != nil {
		return err
	}
	token, err := httpauth.NewTokenFile(tokenPath)
	if err != nil {
		return err
	}
	srv := mcpadapter.NewServer(a.exec, registry.MCPHTTP, version)
	h, err := mcpadapter.NewHTTPHandler(srv, mcpadapter.HTTPConfig{
		Token:          token,
		AllowedOrigins: strings.Split(c.AllowedOrigins, ","),
		MaxBodyBytes:   c.MaxRequestBytes,
		Ready:          a.joplin.Ping,
	}, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("serving MCP Streamable HTTP", "addr", ln.Addr().String(), "path", mcpadapter.Path)
	return serveUntilDone(ctx, mcpadapter.NewHTTPServer(c.Listen, h), ln)
}

// serveUntilDone serves on ln and shuts down gracefully when ctx ends.
func serveUntilDone(ctx context.Context, s *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}
