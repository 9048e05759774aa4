// Package actions serves the registry's Actions-exposed operations as GPT
// Actions: one POST route per operation, generated from the registry,
// behind bearer authentication (before any route lookup), a per-credential
// rate limit, a concurrency bound and request and response size bounds.
// Bodies are the same JSON as MCP structuredContent.
package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/notebridge/notebridge/pkg/auth/authn"
	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
)

// RoutePrefix prefixes every operation route: POST /v1/<operation>.
const RoutePrefix = "/v1/"

// DocumentPath serves the OpenAPI document (authenticated; not listed in
// the document itself).
const DocumentPath = "/openapi.json"

// MaxResponseChars is GPT Actions' limit on a response body.
const MaxResponseChars = 100_000

// maxErrorBytes bounds the encoded domain error inside the {"error": ...}
// body (whose wrapper and trailing newline take the rest), so an error body
// stays within MaxResponseChars: bytes never undercount characters.
const maxErrorBytes = MaxResponseChars - len(`{"error":}`+"\n")

// Config configures the Actions surface.
type Config struct {
	// Token authenticates callers; required.
	Token *bearer.TokenFile
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// MaxConcurrent bounds Actions calls executing at once.
	MaxConcurrent int
	// Rate bounds authenticated requests per credential, e.g. "120-M".
	Rate string
	// Document is served at DocumentPath when non-nil.
	Document []byte
	// DocumentError answers DocumentPath when Document is nil (nil: a
	// PUBLIC_DOMAIN_REQUIRED error); see OriginFromDomain.
	DocumentError *domainerr.Error
	// TokenNotebooks limits the token to these notebooks (nil: every
	// notebook).
	TokenNotebooks *notebookscope.Scope
}

// NewHandler builds the Actions HTTP handler for ex's Actions operations.
func NewHandler(ex *executor.Executor, cfg Config) (*echo.Echo, error) {
	if cfg.Token == nil {
		return nil, errors.New("actions: a token file is required")
	}
	if cfg.MaxConcurrent <= 0 || cfg.MaxBodyBytes <= 0 {
		return nil, errors.New("actions: MaxConcurrent and MaxBodyBytes must be positive")
	}
	rate, err := limiter.NewRateFromFormatted(cfg.Rate)
	if err != nil {
		return nil, errors.New("actions: rate must look like 120-M (count-S|M|H|D)")
	}
	lim := limiter.New(memory.NewStore(), rate)
	slots := make(chan struct{}, cfg.MaxConcurrent)

	e := httpfront.New()
	e.Pre(httpfront.Authenticate(authn.New(cfg.Token, principal.StaticActions().Within(cfg.TokenNotebooks), nil)), rateLimit(lim), httpfront.LimitBody(cfg.MaxBodyBytes))
	for _, op := range ex.Registry().Exposed(registry.Actions) {
		e.POST(RoutePrefix+op.Name, handler(ex, op, slots))
	}
	e.GET(DocumentPath, documentHandler(cfg))
	return e, nil
}

// documentHandler serves the OpenAPI document, or the error that says why
// there is none.
func documentHandler(cfg Config) echo.HandlerFunc {
	if doc := cfg.Document; doc != nil {
		return func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, doc) }
	}
	derr := cfg.DocumentError
	if derr == nil {
		_, derr = OriginFromDomain("")
	}
	return func(c echo.Context) error { return httpfront.WriteError(c, Status(derr.Code), derr) }
}

// rateLimit counts authenticated requests per credential. The key is a
// digest of the presented token, never the token.
func rateLimit(lim *limiter.Limiter) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			tok, _ := bearer.ParseBearer(c.Request().Header)
			sum := sha256.Sum256([]byte(tok))
			ctx, err := lim.Get(c.Request().Context(), hex.EncodeToString(sum[:16]))
			if err != nil {
				return httpfront.WriteError(c, http.StatusServiceUnavailable, domainerr.Retryable(domainerr.Busy, "rate limiter unavailable"))
			}
			h := c.Response().Header()
			h.Set("X-RateLimit-Limit", strconv.FormatInt(ctx.Limit, 10))
			h.Set("X-RateLimit-Remaining", strconv.FormatInt(ctx.Remaining, 10))
			if ctx.Reached {
				wait := max(1, int(time.Until(time.Unix(ctx.Reset, 0)).Seconds()+0.999))
				h.Set("Retry-After", strconv.Itoa(wait))
				return httpfront.WriteError(c, http.StatusTooManyRequests,
					domainerr.Retryable(domainerr.RateLimited, "too many requests; retry after %d s", wait))
			}
			return next(c)
		}
	}
}

func handler(ex *executor.Executor, op registry.Operation, slots chan struct{}) echo.HandlerFunc {
	return func(c echo.Context) error {
		select {
		case slots <- struct{}{}:
		default:
			c.Response().Header().Set("Retry-After", "1")
			return httpfront.WriteError(c, http.StatusServiceUnavailable,
				domainerr.Retryable(domainerr.Busy, "too many Actions calls in progress; retry shortly"))
		}
		defer func() { <-slots }()
		args, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return httpfront.WriteError(c, http.StatusBadRequest, domainerr.New(domainerr.InvalidArgument, "request body could not be read"))
		}
		// The front door put the caller in the context; a request without
		// one reaches the executor as the zero Principal and is refused.
		who, _ := principal.From(c.Request().Context())
		out, derr := ex.Call(c.Request().Context(), who, registry.Actions, op.Name, args)
		if derr != nil {
			if derr.Retryable {
				c.Response().Header().Set("Retry-After", "1")
			}
			return httpfront.WriteError(c, Status(derr.Code), derr.Bound(maxErrorBytes))
		}
		if utf8.RuneCount(out) > MaxResponseChars {
			if op.Effect == registry.EffectRead {
				return httpfront.WriteError(c, http.StatusUnprocessableEntity, domainerr.New(domainerr.ResponseTooLarge,
					"the result exceeds %d characters, the GPT Actions limit; ask for less (smaller pages, no bodies) or use MCP for large content", MaxResponseChars))
			}
			return c.JSON(http.StatusOK, omitted(out))
		}
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, out)
	}
}

// Omitted replaces an oversized successful write result. The write
// happened; only its echo is left out.
type Omitted struct {
	Omitted bool   `json:"omitted"`
	Reason  string `json:"reason"`
	ID      string `json:"id,omitempty"`
}

func omitted(out json.RawMessage) Omitted {
	var head struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(out, &head)
	return Omitted{Omitted: true, ID: head.ID,
		Reason: "the write succeeded; its result exceeds the Actions response limit and was left out"}
}
