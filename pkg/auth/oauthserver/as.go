// Package oauthserver is notebridge's built-in OAuth 2.1 authorization server
// for one owner: RFC 8414 metadata, the authorization code flow with PKCE
// (S256 only), rotating refresh tokens, revocation (RFC 7009), Dynamic
// Client Registration (RFC 7591), and access tokens bound to the one MCP
// resource (RFC 8707). The protocol machinery is ory/fosite; this package
// adds what fosite does not do (registration, the resource parameter, exact
// redirect matching, the owner's consent) and a durable store.
package oauthserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"

	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

// The endpoints, on the issuer's origin.
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
	RevokePath    = "/oauth/revoke"
	RegisterPath  = "/oauth/register"
)

// Config configures the authorization server.
type Config struct {
	// Issuer is the public https origin, e.g. https://notes.example.com.
	Issuer string
	// Resource is the MCP endpoint tokens are issued for.
	Resource string
	// StateDir holds the state file and the token-signing secret.
	StateDir string
	// Consent asks the owner to approve an authorization request.
	Consent Consent
	// Scopes are the scopes of the operations served (scopes_supported;
	// empty: all of scope.All).
	Scopes scope.Set
	// Now is the clock of the store and the resource checks (nil: time.Now).
	Now func() time.Time
	// MaxClients bounds registered clients (0: 100).
	MaxClients int
	// Lifespans (0: 1 hour, 30 days, 5 minutes).
	AccessTokenLifespan  time.Duration
	RefreshTokenLifespan time.Duration
	CodeLifespan         time.Duration
	// SecretChecks bounds the legacy bcrypt client secret checks running
	// at once across the process (0: 1); a check waits at most
	// SecretCheckWait for a slot (0: 2 seconds), then the request gets 429.
	SecretChecks    int
	SecretCheckWait time.Duration
	// CIMDTesting relaxes the fetch of Client ID Metadata Documents in
	// tests; it must stay zero in production.
	CIMDTesting CIMDTesting
	// RegisterRate bounds registrations, TokenRate token and revocation
	// requests, AuthorizeRate authorization requests (each may fetch a
	// client metadata document), per client key (ClientKey; ulule format;
	// defaults "10-M", "60-M", "60-M").
	RegisterRate  string
	TokenRate     string
	AuthorizeRate string
	// TrustedProxies are the peers whose X-Forwarded-For and
	// X-Forwarded-Host are believed (empty: DefaultTrustedProxies).
	TrustedProxies TrustedProxies
	// InternalHosts are the host:port names a proxy sends as Host when it
	// dials us (e.g. bridge:8765), accepted besides the issuer's host and
	// loopback.
	InternalHosts []string
}

// Decision is what the owner's consent step decided.
type Decision int

// The decisions.
const (
	// Pending: the consent step wrote its own response (the page, or an
	// error) and the request stops here.
	Pending Decision = iota
	Approved
	Denied
)

// ConsentRequest describes what the owner is asked to approve.
type ConsentRequest struct {
	ClientID    string
	ClientName  string
	RedirectURI string
	Scopes      scope.Set
}

// Consent decides an authorization request; it runs only for requests
// that are otherwise valid (client, redirect, PKCE, scope, resource).
type Consent interface {
	Decide(w http.ResponseWriter, r *http.Request, req ConsentRequest) Decision
}

// Server is the authorization server.
type Server struct {
	cfg      Config
	store    *Store
	provider fosite.OAuth2Provider
	strategy *oauth2.HMACSHAStrategy
	metadata []byte
	routes   map[string]http.Handler
	cimd     *http.Client
	// secrets checks client secrets for fosite.
	secrets *secretHasher
	hosts   hostSet
}

// New opens the state in cfg.StateDir and builds the server.
func New(cfg Config) (*Server, error) {
	if _, err := resourceserver.CheckHTTPSURL(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("oauth issuer: %w", err)
	}
	if _, err := resourceserver.CheckHTTPSURL(cfg.Resource); err != nil {
		return nil, fmt.Errorf("oauth resource: %w", err)
	}
	if cfg.Consent == nil || cfg.StateDir == "" {
		return nil, errors.New("oauth: a consent step and a state directory are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.MaxClients = orDefault(cfg.MaxClients, 100)
	cfg.AccessTokenLifespan = orDefault(cfg.AccessTokenLifespan, time.Hour)
	cfg.RefreshTokenLifespan = orDefault(cfg.RefreshTokenLifespan, 30*24*time.Hour)
	cfg.CodeLifespan = orDefault(cfg.CodeLifespan, 5*time.Minute)
	cfg.SecretChecks = orDefault(cfg.SecretChecks, 1)
	cfg.SecretCheckWait = orDefault(cfg.SecretCheckWait, 2*time.Second)
	if cfg.RegisterRate == "" {
		cfg.RegisterRate = "10-M"
	}
	if cfg.TokenRate == "" {
		cfg.TokenRate = "60-M"
	}
	if cfg.AuthorizeRate == "" {
		cfg.AuthorizeRate = "60-M"
	}
	if len(cfg.TrustedProxies.prefixes) == 0 {
		cfg.TrustedProxies = defaultTrusted
	}
	dir := filepath.Join(cfg.StateDir, "oauth")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("oauth state directory: %w", err)
	}
	if _, err := loadSecret(secretPath(cfg.StateDir)); err != nil {
		return nil, err
	}
	store, err := OpenStore(statePath(cfg.StateDir), cfg.Resource, cfg.Now)
	if err != nil {
		return nil, err
	}
	fc := &fosite.Config{
		AccessTokenLifespan:            cfg.AccessTokenLifespan,
		RefreshTokenLifespan:           cfg.RefreshTokenLifespan,
		AuthorizeCodeLifespan:          cfg.CodeLifespan,
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.ExactAudienceMatchingStrategy,
		RefreshTokenScopes:             []string{},
		TokenURL:                       cfg.Issuer + TokenPath,
		SendDebugMessagesToClients:     false,
	}
	secrets := &secretHasher{bcrypt: NewGate(cfg.SecretChecks, cfg.SecretCheckWait), migrate: store.replaceSecretHash}
	fc.ClientSecretsHasher = secrets
	// The secret is read from its file on every use: notebridge oauth
	// rotate-secret replaces it under a running server.
	strategy := compose.NewOAuth2HMACStrategy(rotatingConfig{Config: fc, secret: &secretSource{path: secretPath(cfg.StateDir)}})
	s := &Server{cfg: cfg, store: store, strategy: strategy, cimd: cimdClient(cfg.CIMDTesting), secrets: secrets}
	s.hosts = newHostSet(cfg.Issuer, cfg.InternalHosts)
	s.provider = compose.Compose(fc, store, strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2PKCEFactory,
	)
	s.metadata, err = json.Marshal(map[string]any{
		"issuer":                                     cfg.Issuer,
		"authorization_endpoint":                     cfg.Issuer + AuthorizePath,
		"token_endpoint":                             cfg.Issuer + TokenPath,
		"revocation_endpoint":                        cfg.Issuer + RevokePath,
		"registration_endpoint":                      cfg.Issuer + RegisterPath,
		"response_types_supported":                   []string{"code"},
		"response_modes_supported":                   []string{"query"},
		"grant_types_supported":                      []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":           []string{"S256"},
		"token_endpoint_auth_methods_supported":      authMethods,
		"revocation_endpoint_auth_methods_supported": authMethods,
		"scopes_supported":                           cfg.Scopes.OrAll().List(),
		"client_id_metadata_document_supported":      true,

		// RFC 9207: every authorization response carries iss.
		"authorization_response_iss_parameter_supported": true,
	})
	if err != nil {
		return nil, err
	}
	register, err := limited(cfg.RegisterRate, only(s.register, http.MethodPost))
	if err != nil {
		return nil, fmt.Errorf("oauth registration rate: %w", err)
	}
	token, err := limited(cfg.TokenRate, only(s.token, http.MethodPost))
	if err != nil {
		return nil, fmt.Errorf("oauth token rate: %w", err)
	}
	revoke, err := limited(cfg.TokenRate, only(s.revoke, http.MethodPost))
	if err != nil {
		return nil, fmt.Errorf("oauth token rate: %w", err)
	}
	authorize, err := limited(cfg.AuthorizeRate, only(s.authorize, http.MethodGet, http.MethodPost))
	if err != nil {
		return nil, fmt.Errorf("oauth authorize rate: %w", err)
	}
	s.routes = map[string]http.Handler{
		MetadataPath:  only(s.serveMetadata, http.MethodGet, http.MethodHead),
		AuthorizePath: authorize,
		TokenPath:     token,
		RevokePath:    revoke,
		RegisterPath:  register,
	}
	return s, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// loadSecret reads the 32-byte token-signing secret, creating it (0600)
// on first start. Tokens survive a restart because the secret does.
func loadSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) != 32 {
			return nil, fmt.Errorf("oauth token secret %s is not 32 bytes; move it away to start over", path)
		}
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read oauth token secret: %w", err)
	}
	b = make([]byte, 32)
	_, _ = rand.Read(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create oauth token secret: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("create oauth token secret: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("create oauth token secret: %w", err)
	}
	return b, f.Close()
}

// Routes maps every endpoint path to its handler, behind Front; all are
// served without a bearer token. The map is a copy.
func (s *Server) Routes() map[string]http.Handler {
	out := make(map[string]http.Handler, len(s.routes))
	for k, v := range s.routes {
		out[k] = s.Front(v)
	}
	return out
}

// only restricts h to the given methods.
func only(h http.HandlerFunc, methods ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(methods, r.Method) {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			writeJSONError(w, http.StatusMethodNotAllowed, "invalid_request", "method not allowed")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r)
	})
}

func (s *Server) serveMetadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.metadata)
}

// writeJSONError answers an OAuth error as JSON (RFC 6749 §5.2).
func writeJSONError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// VerifyAccessToken looks an access token up by its HMAC signature. A
// refresh token, a code, a revoked or unknown token is refused.
func (s *Server) VerifyAccessToken(ctx context.Context, token string) (resourceserver.Claims, error) {
	use, ar, err := s.provider.IntrospectToken(ctx, token, fosite.AccessToken, &fosite.DefaultSession{})
	if err != nil || use != fosite.AccessToken {
		return resourceserver.Claims{}, resourceserver.ErrInvalidToken
	}
	granted, err := scope.Parse(joinScopes(ar.GetGrantedScopes()))
	if err != nil {
		return resourceserver.Claims{}, resourceserver.ErrInvalidToken
	}
	// Bookkeeping for the operator (oauth grants); a failure to record it
	// does not refuse the request.
	_ = s.store.touchGrant(ar.GetID())
	return resourceserver.Claims{
		GrantID: ar.GetID(), ClientID: ar.GetClient().GetID(), Issuer: s.cfg.Issuer,
		Audience: ar.GetGrantedAudience(), Scopes: granted, Notebooks: grantNotebooks(ar.GetSession()),
		Expires: ar.GetSession().GetExpiresAt(fosite.AccessToken),
	}, nil
}

func joinScopes(a fosite.Arguments) string {
	out := ""
	for i, s := range a {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out
}
