package mcpadapter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/auth/authn"
	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
)

// Path is where MCP Streamable HTTP is served.
const Path = "/mcp"

// healthPaths are served without authentication, for container health checks.
var healthPaths = []string{"/healthz", "/readyz"}

// HTTPConfig configures the MCP Streamable HTTP endpoint.
type HTTPConfig struct {
	// Token authenticates callers; it is required.
	Token *bearer.TokenFile
	// AllowedOrigins lists extra browser origins (scheme://host[:port]);
	// loopback origins are always allowed. A request with any other Origin
	// header gets 403.
	AllowedOrigins []string
	// MaxBodyBytes bounds a request body, chunked or not.
	MaxBodyBytes int64
	// Ready reports readiness for /readyz; nil means always ready.
	Ready func(context.Context) error
	// Degraded, when set, names the parts of the bridge that fail without
	// failing calls (the activity log): /readyz stays 200 and lists them.
	Degraded func() []string
	// Health, when set, reports a configuration error that makes /healthz
	// answer 503 (the container is unhealthy until an operator acts); nil
	// means always healthy. Its error's domain code, if any, is shown.
	Health func(context.Context) error
	// SessionIdleTTL ends a session that has seen no request for this
	// long (0: DefaultSessionIdleTTL).
	SessionIdleTTL time.Duration
	// MaxSessionsPerCredential and MaxSessions bound the live sessions
	// per bearer token and in total (0: the defaults).
	MaxSessionsPerCredential int
	MaxSessions              int
	// MaxStreamsPerCredential bounds the open GET streams per bearer
	// token, and StreamIdleTimeout closes a stream that has carried
	// nothing for that long (0: the defaults).
	MaxStreamsPerCredential int
	StreamIdleTimeout       time.Duration
	// TokenNotebooks limits the static token to these notebooks (nil:
	// every notebook).
	TokenNotebooks *notebookscope.Scope
	// OAuth, when set, also admits access tokens of our authorization
	// server (limited to their scopes) and serves its routes openly.
	OAuth *OAuthConfig
}

// The defaults of the session and stream bounds.
const (
	DefaultSessionIdleTTL           = 30 * time.Minute
	DefaultMaxSessionsPerCredential = 64
	DefaultMaxSessions              = 256
	DefaultMaxStreamsPerCredential  = 16
	DefaultStreamIdleTimeout        = 5 * time.Minute
)

// orDefault returns v, or def when v is not positive.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// NewHTTPHandler returns an echo instance serving MCP at /mcp plus /healthz
// and /readyz. Every other request is checked, in order, for Origin, bearer
// token and body size before any route is looked up.
func NewHTTPHandler(s *Server, cfg HTTPConfig, log *slog.Logger) (*echo.Echo, error) {
	e, _, err := newHTTPHandler(s, cfg, log)
	return e, err
}

// newHTTPHandler is NewHTTPHandler, also returning the session guard.
func newHTTPHandler(s *Server, cfg HTTPConfig, log *slog.Logger) (*echo.Echo, *guard, error) {
	if cfg.Token == nil {
		return nil, nil, errors.New("mcp http: a token file is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	origins := map[string]bool{}
	for _, o := range cfg.AllowedOrigins {
		if o = strings.TrimSpace(o); o != "" {
			origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
		}
	}
	static := principal.StaticMCP().Within(cfg.TokenNotebooks)
	auth := httpfront.Authenticate(authn.New(cfg.Token, static, nil), healthPaths...)
	if cfg.OAuth != nil {
		if cfg.OAuth.Resource == nil {
			return nil, nil, errors.New("mcp http: OAuth needs a resource server")
		}
		open := append([]string(nil), healthPaths...)
		for path := range cfg.OAuth.Routes {
			open = append(open, path)
		}
		auth = httpfront.Authenticate(authn.New(cfg.Token, static, cfg.OAuth.Resource), open...)
	}
	e := httpfront.New()
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if o := c.Request().Header.Get("Origin"); o != "" && !originAllowed(o, origins) {
				return httpfront.WriteError(c, http.StatusForbidden, domainerr.New(domainerr.OriginNotAllowed, "origin not allowed"))
			}
			return next(c)
		}
	}, auth, httpfront.LimitBody(cfg.MaxBodyBytes))
	reg := newSessions(orDefault(cfg.SessionIdleTTL, DefaultSessionIdleTTL),
		orDefault(cfg.MaxSessionsPerCredential, DefaultMaxSessionsPerCredential), orDefault(cfg.MaxSessions, DefaultMaxSessions))
	g := &guard{
		next: server.NewStreamableHTTPServer(s.mcp,
			server.WithSessionIdManagerResolver(reg),
			server.WithStreamableHTTPLogger(log),
		),
		sessions:   reg,
		maxStreams: orDefault(cfg.MaxStreamsPerCredential, DefaultMaxStreamsPerCredential),
		streamIdle: orDefault(cfg.StreamIdleTimeout, DefaultStreamIdleTimeout),
	}
	reg.expire = g.reclaim
	e.Any(Path, echo.WrapHandler(g))
	if cfg.OAuth != nil {
		g.rs, g.srv = cfg.OAuth.Resource, s
		for p, h := range cfg.OAuth.Routes {
			e.Any(p, echo.WrapHandler(h))
		}
	}
	e.GET("/healthz", func(c echo.Context) error {
		if cfg.Health != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
			defer cancel()
			if err := cfg.Health(ctx); err != nil {
				body := map[string]string{"status": "misconfigured"}
				if de, ok := domainerr.As(err); ok {
					body["code"] = string(de.Code)
				}
				return c.JSON(http.StatusServiceUnavailable, body)
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		if cfg.Ready != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
			defer cancel()
			if err := cfg.Ready(ctx); err != nil {
				return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			}
		}
		if cfg.Degraded != nil {
			if d := cfg.Degraded(); len(d) > 0 {
				return c.JSON(http.StatusOK, map[string]any{"status": "ready", "degraded": d})
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
	return e, g, nil
}

// originAllowed accepts loopback origins and the configured list.
func originAllowed(origin string, allowed map[string]bool) bool {
	o := strings.ToLower(origin)
	if allowed[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
