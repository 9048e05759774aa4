package mcpadapter

import (
	"net/http"

	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/scope"
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
