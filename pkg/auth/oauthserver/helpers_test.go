package oauthserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	testIssuer   = "https://notes.example.com"
	testResource = "https://notes.example.com/mcp"
	testRedirect = "https://client.example/cb"
)

// consentStub decides every request the same way and counts the asks.
type consentStub struct {
	decision Decision
	asked    []ConsentRequest
}

func (c *consentStub) Decide(w http.ResponseWriter, _ *http.Request, req ConsentRequest) Decision {
	c.asked = append(c.asked, req)
	if c.decision == Pending {
		http.Error(w, "consent page", http.StatusOK)
	}
	return c.decision
}

type asTest struct {
	t       testing.TB
	as      *Server
	srv     *httptest.Server
	consent *consentStub
	dir     string
	http    *http.Client
}

func newASTest(t testing.TB, dir string) *asTest {
	t.Helper()
	return newASTestWith(t, dir, Config{RegisterRate: "1000-M", TokenRate: "1000-M", AuthorizeRate: "1000-M"})
}

// newASTestWith serves an authorization server with cfg's rates and
// CIMD test setting.
func newASTestWith(t testing.TB, dir string, cfg Config) *asTest {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	c := &consentStub{decision: Approved}
	as, err := New(Config{Issuer: testIssuer, Resource: testResource, StateDir: dir, Consent: c,
		RegisterRate: cfg.RegisterRate, TokenRate: cfg.TokenRate, AuthorizeRate: cfg.AuthorizeRate, CIMDTesting: cfg.CIMDTesting,
		TrustedProxies: cfg.TrustedProxies, InternalHosts: cfg.InternalHosts, Now: cfg.Now})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for p, h := range as.Routes() {
		mux.Handle(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &asTest{t: t, as: as, srv: srv, consent: c, dir: dir,
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request and decodes a JSON answer (nil for another body).
func (a *asTest) do(req *http.Request) (*http.Response, map[string]any) {
	a.t.Helper()
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp, out
}

func (a *asTest) register(doc string) (int, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+RegisterPath, strings.NewReader(doc))
	req.Header.Set("Content-Type", "application/json")
	resp, out := a.do(req)
	return resp.StatusCode, out
}

// publicClient registers a public client with testRedirect.
func (a *asTest) publicClient() string {
	a.t.Helper()
	status, out := a.register(`{"redirect_uris":["` + testRedirect + `"],"token_endpoint_auth_method":"none","client_name":"Test client"}`)
	if status != http.StatusCreated {
		a.t.Fatalf("register: %d %v", status, out)
	}
	return out["client_id"].(string)
}

func pkce() (verifier, challenge string) {
	verifier = randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authParams is a valid authorization request for client.
func authParams(client, challenge string) url.Values {
	return url.Values{
		"response_type": {"code"}, "client_id": {client}, "redirect_uri": {testRedirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"state-123456789"},
		"scope": {"notes:read okf:read"}, "resource": {testResource},
	}
}

// authorize sends an authorization request and returns the response and
// its redirect (nil when it did not redirect).
func (a *asTest) authorize(q url.Values) (*http.Response, *url.URL) {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+AuthorizePath+"?"+q.Encode(), nil)
	resp, _ := a.do(req)
	loc := resp.Header.Get("Location")
	if loc == "" {
		return resp, nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp, u
}

// code runs a valid authorization and returns the code.
func (a *asTest) code(client, challenge string) string {
	a.t.Helper()
	resp, loc := a.authorize(authParams(client, challenge))
	if loc == nil || loc.Query().Get("code") == "" || loc.Query().Get("state") != "state-123456789" {
		a.t.Fatalf("authorize: %d %v", resp.StatusCode, loc)
	}
	return loc.Query().Get("code")
}

func (a *asTest) token(form url.Values) (int, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+TokenPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, out := a.do(req)
	return resp.StatusCode, out
}

func exchange(client, code, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {code},
		"redirect_uri": {testRedirect}, "code_verifier": {verifier}, "resource": {testResource}}
}

func refresh(client, rt string) url.Values {
	return url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}}
}

// tokens runs the whole flow for a new public client.
func (a *asTest) tokens() (client, access, refreshTok string) {
	a.t.Helper()
	client = a.publicClient()
	v, c := pkce()
	status, out := a.token(exchange(client, a.code(client, c), v))
	if status != 200 {
		a.t.Fatalf("token: %d %v", status, out)
	}
	return client, out["access_token"].(string), out["refresh_token"].(string)
}

func (a *asTest) revoke(client, tok string) int {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+RevokePath, strings.NewReader(url.Values{"client_id": {client}, "token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, _ := a.do(req)
	return resp.StatusCode
}

func (a *asTest) valid(tok string) bool {
	_, err := a.as.VerifyAccessToken(a.t.Context(), tok)
	return err == nil
}

// counts is the number of clients, codes, access and active refresh tokens.
func (a *asTest) counts() [4]int {
	s := a.as.store
	s.mu.Lock()
	defer s.mu.Unlock()
	active := 0
	for _, r := range s.st.Refresh {
		if r.Active {
			active++
		}
	}
	return [4]int{len(s.st.Clients), len(s.st.Codes), len(s.st.Access), active}
}

// backdate moves every stored expiry of kind tt into the past.
func (a *asTest) backdate(m func(*state) map[string]tokenRecord, tt string) {
	s := a.as.store
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range m(&s.st) {
		for typ := range r.Session.ExpiresAt {
			if string(typ) == tt {
				r.Session.ExpiresAt[typ] = time.Now().Add(-time.Minute)
			}
		}
		m(&s.st)[k] = r
	}
}
