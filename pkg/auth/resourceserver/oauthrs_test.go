package resourceserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/scope"
)

const (
	resource = "https://notes.example.com/mcp"
	issuer   = "https://notes.example.com"
)

type fakeVerifier map[string]Claims

func (f fakeVerifier) VerifyAccessToken(_ context.Context, tok string) (Claims, error) {
	p, ok := f[tok]
	if !ok {
		return Claims{}, errors.New("unknown token")
	}
	return p, nil
}

func TestAuthenticateChecksIssuerAudienceAndExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	good := Claims{GrantID: "g1", ClientID: "c1", Issuer: issuer, Audience: []string{resource}, Scopes: scope.NewSet(scope.NotesRead), Expires: now.Add(time.Minute)}
	with := func(f func(*Claims)) Claims { p := good; f(&p); return p }
	v := fakeVerifier{
		"good":            good,
		"foreign-issuer":  with(func(p *Claims) { p.Issuer = "https://evil.example" }),
		"other-audience":  with(func(p *Claims) { p.Audience = []string{"https://notes.example.com/other"} }),
		"no-audience":     with(func(p *Claims) { p.Audience = nil }),
		"expired":         with(func(p *Claims) { p.Expires = now }),
		"no-expiry":       with(func(p *Claims) { p.Expires = time.Time{} }),
		"no-grant":        with(func(p *Claims) { p.GrantID = "" }),
		"audience-prefix": with(func(p *Claims) { p.Audience = []string{resource + "/"} }),
	}
	s, err := New(Config{Resource: resource, Issuer: issuer, Verifier: v, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Authenticate(context.Background(), "good"); err != nil || p.GrantID != "g1" {
		t.Fatalf("good token: %+v %v", p, err)
	}
	for _, tok := range []string{"", "unknown", "foreign-issuer", "other-audience", "no-audience", "expired", "no-expiry", "no-grant", "audience-prefix"} {
		if _, err := s.Authenticate(context.Background(), tok); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%q accepted: %v", tok, err)
		}
	}
}

func TestMetadataAndChallenges(t *testing.T) {
	s, err := New(Config{Resource: resource, Issuer: issuer, Verifier: fakeVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.MetadataPath() != "/.well-known/oauth-protected-resource/mcp" || s.MetadataURL() != "https://notes.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("metadata location %s %s", s.MetadataPath(), s.MetadataURL())
	}
	rec := httptest.NewRecorder()
	s.MetadataHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, s.MetadataPath(), nil))
	var md struct {
		Resource string   `json:"resource"`
		AS       []string `json:"authorization_servers"`
		Scopes   []string `json:"scopes_supported"`
		Methods  []string `json:"bearer_methods_supported"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &md); err != nil || rec.Code != 200 || md.Resource != resource ||
		len(md.AS) != 1 || md.AS[0] != issuer || len(md.Scopes) != 4 || len(md.Methods) != 1 || md.Methods[0] != "header" {
		t.Fatalf("metadata %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	s.MetadataHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, s.MetadataPath(), nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST metadata: %d", rec.Code)
	}
	if got := s.Challenge(); got != `Bearer resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp", scope="notes:read notes:write okf:read okf:write"` {
		t.Fatalf("challenge %s", got)
	}
	want := `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp", error_description="this operation needs the scope notes:write"`
	if got := s.ScopeChallenge(scope.NewSet(scope.NotesRead), scope.NotesWrite); got != want {
		t.Fatalf("scope challenge\n got %s\nwant %s", got, want)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, c := range []Config{
		{Resource: "http://notes.example.com/mcp", Issuer: issuer, Verifier: fakeVerifier{}},
		{Resource: "https://notes.example.com/mcp?x=1", Issuer: issuer, Verifier: fakeVerifier{}},
		{Resource: "https://notes.example.com/mcp#", Issuer: issuer, Verifier: fakeVerifier{}},
		{Resource: resource, Issuer: "notes.example.com", Verifier: fakeVerifier{}},
		{Resource: resource, Issuer: issuer},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}
