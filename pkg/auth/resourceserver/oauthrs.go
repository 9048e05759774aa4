// Package resourceserver makes the MCP endpoint an OAuth 2.1 resource server (MCP
// authorization, 2025-06-18 and later): it publishes RFC 9728 Protected
// Resource Metadata, checks that an access token was issued by our
// authorization server for this resource (RFC 8707 audience) and has not
// expired, and builds the WWW-Authenticate challenges of RFC 6750 and
// RFC 9728. It never logs, echoes or stores a token.
package resourceserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

// Claims are what a valid access token says: whose grant it is, for whom
// and until when, and what it grants. authn turns them into the caller's
// principal.Principal.
type Claims struct {
	// GrantID identifies the owner's grant; it stays the same across
	// refreshes, so it can own MCP sessions.
	GrantID  string
	ClientID string
	Issuer   string
	Audience []string
	Scopes   scope.Set
	// Notebooks is what the grant may read and write of Joplin.
	Notebooks notebookscope.Scope
	Expires   time.Time
}

// Verifier looks an access token up in the authorization server's store.
// It returns an error for a token it did not issue or that was revoked.
type Verifier interface {
	VerifyAccessToken(ctx context.Context, token string) (Claims, error)
}

// ErrInvalidToken is the one error for every refused token; callers answer
// 401 invalid_token without saying which check failed.
var ErrInvalidToken = errors.New("invalid access token")

// Config describes the protected resource.
type Config struct {
	// Resource is the canonical https URL of the MCP endpoint, e.g.
	// https://notes.example.com/mcp; tokens must be issued for it.
	Resource string
	// Issuer is the authorization server's issuer identifier.
	Issuer   string
	Verifier Verifier
	// Scopes are the scopes of the operations served (scopes_supported;
	// empty: all of scope.All).
	Scopes scope.Set
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Server checks access tokens for one resource.
type Server struct {
	cfg         Config
	metadataURL string
	metadata    []byte
	// scope is the served scopes, space-separated, for the challenges.
	scope string
}

// WellKnownPrefix is where RFC 9728 metadata lives, before the resource path.
const WellKnownPrefix = "/.well-known/oauth-protected-resource"

// New validates cfg.
func New(cfg Config) (*Server, error) {
	u, err := CheckHTTPSURL(cfg.Resource)
	if err != nil {
		return nil, fmt.Errorf("oauth resource: %w", err)
	}
	if _, err := CheckHTTPSURL(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("oauth issuer: %w", err)
	}
	if cfg.Verifier == nil {
		return nil, errors.New("oauth resource: a token verifier is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	served := cfg.Scopes.OrAll()
	s := &Server{cfg: cfg, metadataURL: u.Scheme + "://" + u.Host + WellKnownPrefix + u.Path, scope: served.String()}
	s.metadata, err = json.Marshal(map[string]any{
		"resource":                 cfg.Resource,
		"authorization_servers":    []string{cfg.Issuer},
		"scopes_supported":         served.List(),
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "notebridge",
	})
	return s, err
}

// CheckHTTPSURL accepts an absolute https URL without user info, query or
// fragment, and returns it parsed.
func CheckHTTPSURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return nil, fmt.Errorf("%.200q is not an absolute https URL without query or fragment", raw)
	}
	return u, nil
}

// Resource returns the canonical resource URL.
func (s *Server) Resource() string { return s.cfg.Resource }

// MetadataPath is the path RFC 9728 §3.1 derives from the resource URL:
// the well-known prefix followed by the resource's path.
func (s *Server) MetadataPath() string {
	u, _ := url.Parse(s.metadataURL)
	return u.Path
}

// MetadataURL is the absolute URL of the metadata document.
func (s *Server) MetadataURL() string { return s.metadataURL }

// Metadata returns the Protected Resource Metadata document.
func (s *Server) Metadata() []byte { return s.metadata }

// Authenticate verifies token and checks it was issued by our issuer for
// this resource and has not expired. Every failure is ErrInvalidToken.
func (s *Server) Authenticate(ctx context.Context, token string) (Claims, error) {
	if token == "" {
		return Claims{}, ErrInvalidToken
	}
	p, err := s.cfg.Verifier.VerifyAccessToken(ctx, token)
	if err != nil {
		return Claims{}, ErrInvalidToken
	}
	if p.Issuer != s.cfg.Issuer || !slices.Contains(p.Audience, s.cfg.Resource) || p.GrantID == "" ||
		p.Expires.IsZero() || !s.cfg.Now().Before(p.Expires) {
		return Claims{}, ErrInvalidToken
	}
	return p, nil
}

// Challenge is the WWW-Authenticate value for a request without a token.
// Its scope names every scope served: MCP clients (Claude among them) ask
// for the scopes of the first 401's challenge and fall back to
// scopes_supported only when it has none.
func (s *Server) Challenge() string {
	return fmt.Sprintf(`Bearer resource_metadata=%q, scope=%q`, s.metadataURL, s.scope)
}

// InvalidTokenChallenge is the WWW-Authenticate value for a refused token.
func (s *Server) InvalidTokenChallenge() string {
	return fmt.Sprintf(`Bearer error="invalid_token", error_description="the access token is invalid or expired", resource_metadata=%q, scope=%q`,
		s.metadataURL, s.scope)
}

// ScopeChallenge is the WWW-Authenticate value of a 403 for a token that
// lacks need (MCP authorization, Scope Challenge Handling): it asks for the
// scopes already granted plus need, so a client that re-authorizes with it
// keeps what it had.
func (s *Server) ScopeChallenge(granted scope.Set, need scope.Scope) string {
	if need == "" {
		return fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, error_description="no scope allows this operation"`, s.metadataURL)
	}
	want := granted.Union(scope.NewSet(need))
	return fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q, error_description="this operation needs the scope %s"`,
		want.String(), s.metadataURL, need)
}

// MetadataHandler serves the metadata document to GET and HEAD.
func (s *Server) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(s.metadata)
	})
}
