package mcpadapter

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/scope"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
)

// OAuthConfig turns on OAuth 2.1 for /mcp: access tokens of our own
// authorization server are accepted beside the static bearer token, and
// Routes (metadata, authorization endpoints) are served without
// authentication.
type OAuthConfig struct {
	Resource *resourceserver.Server
	// Routes maps exact paths to handlers served without a bearer token.
	Routes map[string]http.Handler
}

// authenticateOAuth is the front door when OAuth is on. The static bearer
// token is checked first and admits the request as principal.StaticMCP;
// otherwise an access token of our authorization server, checked for
// issuer, audience and expiry, admits it as its grant (principal.OAuth,
// limited to the grant's scopes). A request with neither gets 401 with the
// RFC 9728 challenge naming the metadata.
func authenticateOAuth(tf *bearer.TokenFile, static principal.Principal, oc *OAuthConfig, open ...string) echo.MiddlewareFunc {
	rs := oc.Resource
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			for _, o := range open {
				if r.URL.Path == o {
					return next(c)
				}
			}
			if _, ok := oc.Routes[r.URL.Path]; ok {
				return next(c)
			}
			err := tf.Check(r.Header)
			if errors.Is(err, bearer.ErrCredentialConflict) {
				return httpfront.WriteError(c, http.StatusServiceUnavailable, domainerr.New(domainerr.CredentialConflict,
					"the server's credentials are misconfigured (two of them are the same); an operator must fix them"))
			}
			if err == nil {
				c.SetRequest(r.WithContext(principal.With(r.Context(), static)))
				return next(c)
			}
			tok, perr := bearer.ParseBearer(r.Header)
			if perr != nil {
				c.Response().Header().Set("WWW-Authenticate", rs.Challenge())
				return httpfront.WriteError(c, http.StatusUnauthorized, domainerr.New(domainerr.Unauthenticated, "missing or invalid bearer token"))
			}
			p, aerr := rs.Authenticate(r.Context(), tok)
			if aerr != nil {
				c.Response().Header().Set("WWW-Authenticate", rs.InvalidTokenChallenge())
				return httpfront.WriteError(c, http.StatusUnauthorized, domainerr.New(domainerr.Unauthenticated, "missing or invalid bearer token"))
			}
			c.SetRequest(r.WithContext(principal.With(r.Context(), principal.OAuth(p.GrantID, p.Scopes, p.Notebooks))))
			return next(c)
		}
	}
}

// scopeRefusal answers a tools/call, or a read of the note resources, that
// the executor would refuse for INSUFFICIENT_SCOPE with HTTP 403 and the
// insufficient_scope challenge (MCP authorization, Scope Challenge
// Handling), before mcp-go sees it, and reports whether it did. The decision is the executor's (Authorize); this
// only lets the client step up.
func (g *guard) scopeRefusal(w http.ResponseWriter, r *http.Request, m message) bool {
	if g.rs == nil || g.srv == nil {
		return false
	}
	name := m.Params.Name
	switch {
	case m.Method == "tools/call" && g.srv.tools[name]:
	case (m.Method == "resources/list" || m.Method == "resources/read") && g.srv.resources:
		name = "get_note" // the note resources are read with the note reads
	default:
		return false
	}
	who, ok := principal.From(r.Context())
	if !ok {
		return false
	}
	derr := g.srv.ex.Authorize(who, name)
	if derr == nil || derr.Code != domainerr.InsufficientScope {
		return false
	}
	need, _ := derr.Details["scope"].(string)
	w.Header().Set("WWW-Authenticate", g.rs.ScopeChallenge(who.Scopes(), scope.Scope(need)))
	writeRPCError(w, http.StatusForbidden, m.ID, codeBadSession, derr.Message, derr)
	return true
}
