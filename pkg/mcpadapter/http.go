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

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/httpauth"
	"github.com/notebridge/notebridge/pkg/httpfront"
)

// Path is where MCP Streamable HTTP is served.
const Path = "/mcp"

// healthPaths are served without authentication, for container health checks.
var healthPaths = []string{"/healthz", "/readyz"}

// HTTPConfig configures the MCP Streamable HTTP endpoint.
type HTTPConfig struct {
	// Token authenticates callers; it is required.
	Token *httpauth.TokenFile
	// AllowedOrigins lists extra browser origins (scheme://host[:port]);
	// loopback origins are always allowed. A request with any other Origin
	// header gets 403.
	AllowedOrigins []string
	// MaxBodyBytes bounds a request body, chunked or not.
	MaxBodyBytes int64
	// Ready reports readiness for /readyz; nil means always ready.
	Ready func(context.Context) error
}

// NewHTTPHandler returns an echo instance serving MCP at /mcp plus /healthz
// and /readyz. Every other request is checked, in order, for Origin, bearer
// token and body size before any route is looked up.
func NewHTTPHandler(s *server.MCPServer, cfg HTTPConfig, log *slog.Logger) (*echo.Echo, error) {
	if cfg.Token == nil {
		return nil, errors.New("mcp http: a token file is required")
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
	e := httpfront.New()
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if o := c.Request().Header.Get("Origin"); o != "" && !originAllowed(o, origins) {
				return httpfront.WriteError(c, http.StatusForbidden, domainerr.New(domainerr.OriginNotAllowed, "origin not allowed"))
			}
			return next(c)
		}
	}, httpfront.Authenticate(cfg.Token, healthPaths...), httpfront.LimitBody(cfg.MaxBodyBytes))
	streamable := server.NewStreamableHTTPServer(s,
		server.WithStateful(true),
		server.WithStreamableHTTPLogger(log),
	)
	e.Any(Path, echo.WrapHandler(streamable))
	e.GET("/healthz", func(c echo.Context) error {
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
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
	return e, nil
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
