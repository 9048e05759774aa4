package authn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

const (
	staticToken = "static-token-0123456789"
	accessToken = "access-token-0123456789"
	resource    = "https://notes.example.com/mcp"
	issuer      = "https://notes.example.com"
)

type verifier map[string]resourceserver.Claims

func (v verifier) VerifyAccessToken(_ context.Context, tok string) (resourceserver.Claims, error) {
	if c, ok := v[tok]; ok {
		return c, nil
	}
	return resourceserver.Claims{}, errors.New("unknown")
}

func writeToken(t *testing.T, name, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func tokenFile(t *testing.T) *bearer.TokenFile {
	t.Helper()
	tf, err := bearer.NewTokenFile(writeToken(t, "token", staticToken))
	if err != nil {
		t.Fatal(err)
	}
	return tf
}

func oauth(t *testing.T) *resourceserver.Server {
	t.Helper()
	rs, err := resourceserver.New(resourceserver.Config{Resource: resource, Issuer: issuer, Verifier: verifier{
		accessToken: {GrantID: "g1", ClientID: "c1", Issuer: issuer, Audience: []string{resource},
			Scopes: scope.NewSet(scope.NotesRead), Expires: time.Now().Add(time.Hour)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func request(auth ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	for _, a := range auth {
		r.Header.Add("Authorization", a)
	}
	return r
}

func TestStaticBearer(t *testing.T) {
	a := New(tokenFile(t), principal.StaticActions(), nil)
	who, err := a.Authenticate(request("Bearer " + staticToken))
	if err != nil || who.Kind() != principal.ActionsToken {
		t.Fatalf("static token: %v %v", who.Kind(), err)
	}
	for name, c := range map[string]struct {
		req  *http.Request
		want error
	}{
		"no header":    {request(), ErrNoToken},
		"other scheme": {request("Basic " + staticToken), ErrNoToken},
		"two headers":  {request("Bearer "+staticToken, "Bearer "+staticToken), ErrNoToken},
		"wrong token":  {request("Bearer wrong-token-0123456789"), ErrBadToken},
		// Without OAuth a valid access token is just another wrong token.
		"access token": {request("Bearer " + accessToken), ErrBadToken},
	} {
		who, err := a.Authenticate(c.req)
		if !errors.Is(err, c.want) || who.Known() {
			t.Errorf("%s: %v %v, want %v", name, who.Kind(), err, c.want)
		}
		if ch := a.Challenge(err); ch != `Bearer realm="notebridge"` {
			t.Errorf("%s: challenge %q", name, ch)
		}
	}
}

func TestOAuth(t *testing.T) {
	rs := oauth(t)
	a := New(tokenFile(t), principal.StaticMCP(), rs)
	who, err := a.Authenticate(request("Bearer " + staticToken))
	if err != nil || who.Kind() != principal.MCPToken {
		t.Fatalf("static token: %v %v", who.Kind(), err)
	}
	who, err = a.Authenticate(request("Bearer " + accessToken))
	if err != nil || who.Kind() != principal.OAuthGrant || who.GrantID() != "g1" || !who.Scopes().Has(scope.NotesRead) || who.Scopes().Has(scope.NotesWrite) {
		t.Fatalf("access token: %v %q %v %v", who.Kind(), who.GrantID(), who.Scopes(), err)
	}
	_, err = a.Authenticate(request())
	if !errors.Is(err, ErrNoToken) || a.Challenge(err) != rs.Challenge() {
		t.Errorf("no token: %v %q", err, a.Challenge(err))
	}
	_, err = a.Authenticate(request("Bearer unknown-token-0123456789"))
	if !errors.Is(err, ErrBadToken) || a.Challenge(err) != rs.InvalidTokenChallenge() {
		t.Errorf("unknown token: %v %q", err, a.Challenge(err))
	}
}

// A token file that collides with another credential refuses every
// request, the right token and valid access tokens included.
func TestConflictRefusesEverything(t *testing.T) {
	tf := tokenFile(t)
	peer := writeToken(t, "peer", staticToken)
	a := New(tf.DistinctFrom("the MCP token file", nil, bearer.Credential{Name: "the Actions token file", Path: peer}), principal.StaticMCP(), oauth(t))
	for _, h := range []string{"Bearer " + staticToken, "Bearer " + accessToken, ""} {
		req := request()
		if h != "" {
			req = request(h)
		}
		if who, err := a.Authenticate(req); !errors.Is(err, ErrConflict) || who.Known() {
			t.Errorf("%.12q: %v %v, want the conflict", h, who.Kind(), err)
		}
	}
}
