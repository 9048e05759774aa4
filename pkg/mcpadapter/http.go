package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"io"
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
)

// Path is where MCP Streamable HTTP is served.
const Path = "/mcp"

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
// and /readyz. Every other request is checked, in order, for Origin, body
// size and bearer token before any route is looked up.
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
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = jsonErrorHandler
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
				return next(c)
			}
			if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, origins) {
				return writeError(c, http.StatusForbidden, domainerr.New(domainerr.OriginNotAllowed, "origin not allowed"))
			}
			if err := cfg.Token.Check(r.Header); err != nil {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="notebridge"`)
				return writeError(c, http.StatusUnauthorized, domainerr.New(domainerr.Unauthenticated, "missing or invalid bearer token"))
			}
			if r.Body != nil && r.Body != http.NoBody {
				if r.ContentLength > cfg.MaxBodyBytes {
					return writeError(c, http.StatusRequestEntityTooLarge, tooLarge(cfg.MaxBodyBytes))
				}
				body, err := io.ReadAll(io.LimitReader(r.Body, cfg.MaxBodyBytes+1))
				if err != nil {
					return writeError(c, http.StatusBadRequest, domainerr.New(domainerr.InvalidArgument, "request body could not be read"))
				}
				if int64(len(body)) > cfg.MaxBodyBytes {
					return writeError(c, http.StatusRequestEntityTooLarge, tooLarge(cfg.MaxBodyBytes))
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			return next(c)
		}
	})
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

func tooLarge(max int64) *domainerr.Error {
	return domainerr.New(domainerr.RequestTooLarge, "request body exceeds %d bytes", max)
}

func writeError(c echo.Context, status int, e *domainerr.Error) error {
	return c.JSON(status, map[string]any{"error": e})
}

// jsonErrorHandler answers routing and handler errors with the domain error
// body and no internal detail.
func jsonErrorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status := http.StatusInternalServerError
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
	}
	code := domainerr.Internal
	msg := "internal error"
	switch status {
	case http.StatusNotFound:
		code, msg = domainerr.NotFound, "no such route"
	case http.StatusMethodNotAllowed:
		code, msg = domainerr.InvalidArgument, "method not allowed"
	}
	_ = writeError(c, status, domainerr.New(code, "%s", msg))
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

// NewHTTPServer wraps h in an http.Server with timeouts against stalled
// clients. There is no write timeout, because MCP streams responses.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    32 << 10,
	}
}
