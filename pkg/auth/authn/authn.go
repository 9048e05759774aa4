// Package authn is the one authenticator of notebridge's HTTP surfaces: it
// turns a request's credentials (the static bearer token of the surface,
// or, where OAuth is on, an access token of notebridge's authorization
// server) into the principal.Principal they stand for. It returns errors
// and never writes a response: the transports answer them.
package authn

import (
	"errors"
	"net/http"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/principal"
)

// The refusals. Every one hides which check failed.
var (
	// ErrConflict: the surface's token file collides with another
	// credential; every request is refused until an operator fixes it
	// (503), whatever its headers.
	ErrConflict = bearer.ErrCredentialConflict
	// ErrNoToken: no well-formed "Authorization: Bearer" header (401).
	ErrNoToken = errors.New("no bearer token")
	// ErrBadToken: a bearer token that is neither the static token nor a
	// valid access token (401).
	ErrBadToken = errors.New("invalid bearer token")
)

// staticChallenge is the WWW-Authenticate value of a surface without OAuth.
const staticChallenge = `Bearer realm="notebridge"`

// Authenticator checks one surface's credentials.
type Authenticator struct {
	token  *bearer.TokenFile
	static principal.Principal
	oauth  *resourceserver.Server
}

// New returns the authenticator of a surface whose static bearer token is
// in token and stands for static. oauth, when not nil, also admits the
// access tokens it accepts, each as its grant (principal.OAuth, limited to
// the grant's scopes and notebooks).
func New(token *bearer.TokenFile, static principal.Principal, oauth *resourceserver.Server) *Authenticator {
	return &Authenticator{token: token, static: static, oauth: oauth}
}

// Authenticate returns who r's credentials stand for: the static
// principal for the static token (checked first, in constant time), else
// an OAuth grant for a valid access token. The error is ErrConflict,
// ErrNoToken or ErrBadToken.
func (a *Authenticator) Authenticate(r *http.Request) (principal.Principal, error) {
	err := a.token.Check(r.Header)
	if err == nil {
		return a.static, nil
	}
	if errors.Is(err, bearer.ErrCredentialConflict) {
		return principal.Principal{}, ErrConflict
	}
	tok, err := bearer.ParseBearer(r.Header)
	if err != nil {
		return principal.Principal{}, ErrNoToken
	}
	if a.oauth == nil {
		return principal.Principal{}, ErrBadToken
	}
	g, err := a.oauth.Authenticate(r.Context(), tok)
	if err != nil {
		return principal.Principal{}, ErrBadToken
	}
	return principal.OAuth(g.GrantID, g.Scopes, g.Notebooks), nil
}

// Challenge is the WWW-Authenticate value to answer a 401 for err with:
// with OAuth on, the RFC 9728 challenge naming the metadata (for a
// presented but refused token, with error="invalid_token").
func (a *Authenticator) Challenge(err error) string {
	switch {
	case a.oauth == nil:
		return staticChallenge
	case errors.Is(err, ErrBadToken):
		return a.oauth.InvalidTokenChallenge()
	default:
		return a.oauth.Challenge()
	}
}
