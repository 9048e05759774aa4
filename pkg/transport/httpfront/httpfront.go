// Package httpfront is the shared front door of notebridge's HTTP surfaces
// (MCP Streamable HTTP and GPT Actions): authentication (pkg/auth/authn)
// before any route lookup, request body bounds that also catch chunked bodies, the
// JSON error body, and an http.Server with timeouts against stalled
// clients.
package httpfront

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/notebridge/notebridge/pkg/auth/authn"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
)

// New returns an echo instance that never writes to stdout and answers
// routing errors with the domain error body.
func New() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = errorHandler
	return e
}

// WriteError answers with status and the body {"error": {...}}.
func WriteError(c echo.Context, status int, e *domainerr.Error) error {
	return c.JSON(status, map[string]any{"error": e})
}

// Authenticate rejects, before any route lookup, every request a does not
// authenticate, unknown paths included: 401 with a's challenge, never 404;
// a request it admits goes on carrying the principal it stands for
// (principal.With). Paths listed in open skip authentication (health
// checks, OAuth's own endpoints) and carry no principal. While the
// surface's token file collides with another credential, every other
// request gets 503 CREDENTIAL_CONFLICT, whatever its headers.
func Authenticate(a *authn.Authenticator, open ...string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if slices.Contains(open, r.URL.Path) {
				return next(c)
			}
			who, err := a.Authenticate(r)
			if errors.Is(err, authn.ErrConflict) {
				return WriteError(c, http.StatusServiceUnavailable, domainerr.New(domainerr.CredentialConflict,
					"the server's credentials are misconfigured (two of them are the same); an operator must fix them"))
			}
			if err != nil {
				c.Response().Header().Set("WWW-Authenticate", a.Challenge(err))
				return WriteError(c, http.StatusUnauthorized, domainerr.New(domainerr.Unauthenticated, "missing or invalid bearer token"))
			}
			c.SetRequest(r.WithContext(principal.With(r.Context(), who)))
			return next(c)
		}
	}
}

// LimitBody reads the whole request body, up to max bytes, before the
// handler runs. An oversized body, declared or chunked, gets a clean 413.
func LimitBody(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.Body == nil || r.Body == http.NoBody {
				return next(c)
			}
			if r.ContentLength > max {
				return WriteError(c, http.StatusRequestEntityTooLarge, tooLarge(max))
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
			if err != nil {
				return WriteError(c, http.StatusBadRequest, domainerr.New(domainerr.InvalidArgument, "request body could not be read"))
			}
			if int64(len(body)) > max {
				return WriteError(c, http.StatusRequestEntityTooLarge, tooLarge(max))
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			return next(c)
		}
	}
}

func tooLarge(max int64) *domainerr.Error {
	return domainerr.New(domainerr.RequestTooLarge, "request body exceeds %d bytes", max)
}

// errorHandler answers routing and handler errors with the domain error
// body and no internal detail.
func errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status := http.StatusInternalServerError
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
	}
	code, msg := domainerr.Internal, "internal error"
	switch status {
	case http.StatusNotFound:
		code, msg = domainerr.NotFound, "no such route"
	case http.StatusMethodNotAllowed:
		code, msg = domainerr.InvalidArgument, "method not allowed"
	case http.StatusRequestEntityTooLarge:
		code, msg = domainerr.RequestTooLarge, "request body too large"
	}
	_ = WriteError(c, status, domainerr.New(code, "%s", msg))
}

// Timeouts bound how long a client may stall.
type Timeouts struct {
	ReadHeader time.Duration
	Read       time.Duration
	Write      time.Duration
	Idle       time.Duration
}

// DefaultTimeouts suit agent clients on a local network or behind Caddy.
// Write is zero (none) by default because MCP streams responses.
var DefaultTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 60 * time.Second, Idle: 90 * time.Second}

// NewServer wraps h in an http.Server with the given timeouts.
func NewServer(addr string, h http.Handler, t Timeouts) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    32 << 10,
	}
}
