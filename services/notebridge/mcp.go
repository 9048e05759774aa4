package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/auth/consent"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// runStdio serves MCP over stdin/stdout. It opens no listener and needs no
// bearer token; stdout carries protocol messages only, logs go to stderr.
func runStdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, a, err := setup("mcp stdio", args, stderr, false, nil)
	if err != nil {
		return err
	}
	defer a.close()
	notebooks, err := notebookScope("", c.Notebooks, c.WriteNotebooks)
	if err != nil {
		return err
	}
	a.reportJoplin(ctx, c.JoplinTokenFile, false) // stdio opens no socket until a call
	srv := mcpadapter.NewServer(a.exec, registry.MCPStdio, version, a.mcpOpts...)
	a.notifyResources(srv)
	// Start-up garbage (package init, catalog build) is most of the heap:
	// collect it and hand its pages back while the client's first message
	// is on its way, so the idle process holds about 2 MiB less.
	go debug.FreeOSMemory()
	return mcpadapter.ServeStdioAs(ctx, principal.Stdio().Within(notebooks), srv, stdin, stdout, int(c.MaxRequestBytes)+1<<20, a.log)
}

// runMCPServe serves MCP Streamable HTTP with health routes until ctx ends.
func runMCPServe(ctx context.Context, args []string, stderr io.Writer) error {
	c, a, err := setup("mcp serve", args, stderr, true, func(fs *flag.FlagSet, c *config) {
		bindOAuthFlags(fs, c)
		fs.StringVar(&c.Domain, "domain", "", "public DNS name of the service (NOTEBRIDGE_DOMAIN); with --oauth the MCP resource is https://DOMAIN/mcp")
	})
	if err != nil {
		return err
	}
	l, err := mcpListener(c, a, stderr)
	if err != nil {
		return err
	}
	a.reportJoplin(ctx, c.JoplinTokenFile, true)
	a.followSync(c)
	return serveAll(ctx, l)
}

// listener is one HTTP surface ready to serve.
type listener struct {
	name string
	ln   net.Listener
	srv  *http.Server
}

// mcpListener binds MCP Streamable HTTP (plus health routes) on c.Listen.
// It refuses to start unless the Joplin, MCP and (when configured) Actions
// credentials are three distinct files holding three distinct tokens, and
// the MCP token file keeps checking that on every request.
func mcpListener(c *config, a *app, stderr io.Writer) (listener, error) {
	tokenPath, err := ensureTokenFile(c.MCPTokenFile, c.StateDir, "mcp-token", stderr)
	if err != nil {
		return listener{}, err
	}
	c.MCPTokenFile = tokenPath
	token, err := bearer.NewTokenFile(tokenPath)
	if err != nil {
		return listener{}, fmt.Errorf("MCP %w", err)
	}
	if err := bearer.Distinct(c.credentials()...); err != nil {
		return listener{}, err
	}
	token = token.DistinctFrom(mcpCred, a.log, c.credentials(mcpCred)...)
	origins := strings.Split(c.AllowedOrigins, ",")
	withConsole, err := c.consoleOn()
	if err != nil {
		return listener{}, err
	}
	var checker *consent.Checker
	if c.OAuth || withConsole {
		if checker, err = ownerChecker(c, a, stderr); err != nil {
			return listener{}, err
		}
	}
	var oc *mcpadapter.OAuthConfig
	if c.OAuth {
		var origin string
		if oc, origin, err = oauthConfig(c, a, checker); err != nil {
			return listener{}, err
		}
		origins = append(origins, origin) // the consent form posts from it
	}
	notebooks, err := notebookScope("mcp-", c.MCPNotebooks, c.MCPWriteNotebooks)
	if err != nil {
		return listener{}, err
	}
	srv := mcpadapter.NewServer(a.exec, registry.MCPHTTP, version, a.mcpOpts...)
	a.notifyResources(srv)
	h, err := mcpadapter.NewHTTPHandler(srv, mcpadapter.HTTPConfig{
		Token:          token,
		AllowedOrigins: origins,
		OAuth:          oc,
		TokenNotebooks: notebooks,
		MaxBodyBytes:   c.MaxRequestBytes,
		Ready:          a.joplin.Ping,
		Degraded:       a.activity.degraded,
		Health:         a.joplinHealth(c.JoplinTokenFile, c.StateDir),

		SessionIdleTTL:           c.MCPSessionTTL,
		MaxSessionsPerCredential: c.MCPMaxSessionsPerCredential,
		MaxSessions:              c.MCPMaxSessions,
		MaxStreamsPerCredential:  c.MCPMaxStreamsPerCredential,
		StreamIdleTimeout:        c.MCPStreamIdleTimeout,
	}, a.log)
	if err != nil {
		return listener{}, err
	}
	var served http.Handler = h
	if withConsole {
		if served, err = consoleBeside(c, a, checker, h); err != nil {
			return listener{}, err
		}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return listener{}, fmt.Errorf("listen for MCP: %w", err)
	}
	a.log.Info("serving MCP Streamable HTTP", "addr", ln.Addr().String(), "path", mcpadapter.Path)
	return listener{name: "mcp", ln: ln, srv: httpfront.NewServer(c.Listen, served, c.timeouts())}, nil
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

// Credential names used in errors and logs.
const (
	joplinCred  = "the Joplin token file"
	mcpCred     = "the MCP bearer token file"
	actionsCred = "the Actions bearer token file"
)

// credentials lists the credential files, those named in except left out
// (a token file is never compared with itself); unset ones have no path.
func (c *config) credentials(except ...string) []bearer.Credential {
	var out []bearer.Credential
	for _, cred := range []bearer.Credential{
		{Name: joplinCred, Path: c.JoplinTokenFile},
		{Name: mcpCred, Path: c.MCPTokenFile},
		{Name: actionsCred, Path: c.ActionsTokenFile},
	} {
		if !slices.Contains(except, cred.Name) {
			out = append(out, cred)
		}
	}
	return out
}

// notifyResources has srv tell its clients that the note resources
// changed whenever a write the bridge made added, changed or trashed notes:
// only the clients whose notebook scope sees the change.
func (a *app) notifyResources(srv *mcpadapter.Server) {
	if a.joplin == nil {
		return
	}
	a.joplin.Observe(func(ctx context.Context, w joplin.Write) {
		switch w.Kind {
		case joplin.NoteSaved, joplin.NoteTrashed, joplin.NotebookTrashed:
			mcpadapter.NotifyResourcesChanged(srv, a.view.Audience(ctx, w))
		}
	})
}
