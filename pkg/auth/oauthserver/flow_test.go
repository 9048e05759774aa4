package oauthserver

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/scope"
)

// TestHappyPath: register → authorize (consent) → token → verify →
// refresh (rotation) → revoke → refused.
func TestHappyPath(t *testing.T) {
	a := newASTest(t, "")
	client := a.publicClient()
	v, c := pkce()
	code := a.code(client, c)
	if len(a.consent.asked) != 1 || a.consent.asked[0].ClientName != "Test client" || a.consent.asked[0].RedirectURI != testRedirect ||
		a.consent.asked[0].Scopes != scope.NewSet(scope.NotesRead, scope.OKFRead) {
		t.Fatalf("consent asked %+v", a.consent.asked)
	}
	status, out := a.token(exchange(client, code, v))
	if status != 200 || out["token_type"] != "bearer" || out["scope"] != "notes:read okf:read" {
		t.Fatalf("token: %d %v", status, out)
	}
	access, rt := out["access_token"].(string), out["refresh_token"].(string)
	p, err := a.as.VerifyAccessToken(t.Context(), access)
	if err != nil || p.Issuer != testIssuer || len(p.Audience) != 1 || p.Audience[0] != testResource ||
		p.Scopes != scope.NewSet(scope.NotesRead, scope.OKFRead) || p.ClientID != client || p.GrantID == "" {
		t.Fatalf("verify: %+v %v", p, err)
	}
	status, out = a.token(refresh(client, rt))
	if status != 200 {
		t.Fatalf("refresh: %d %v", status, out)
	}
	access2, rt2 := out["access_token"].(string), out["refresh_token"].(string)
	if rt2 == rt || access2 == access {
		t.Fatal("refresh did not rotate the tokens")
	}
	if a.valid(access) {
		t.Fatal("the access token of the rotated-out refresh token still works")
	}
	p2, err := a.as.VerifyAccessToken(t.Context(), access2)
	if err != nil || p2.GrantID != p.GrantID {
		t.Fatalf("refreshed token: %+v %v (grant must stay %s)", p2, err, p.GrantID)
	}
	if st := a.revoke(client, rt2); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	if a.valid(access2) {
		t.Fatal("revoking the refresh token left its access token valid")
	}
	if st, out := a.token(refresh(client, rt2)); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("refresh after revocation: %d %v", st, out)
	}
}

// TestMetadata: RFC 8414 metadata names every endpoint and S256 only.
func TestMetadata(t *testing.T) {
	a := newASTest(t, "")
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+MetadataPath, nil)
	resp, md := a.do(req)
	if resp.StatusCode != 200 || md["issuer"] != testIssuer || md["token_endpoint"] != testIssuer+TokenPath ||
		md["registration_endpoint"] != testIssuer+RegisterPath || md["revocation_endpoint"] != testIssuer+RevokePath ||
		md["authorization_endpoint"] != testIssuer+AuthorizePath {
		t.Fatalf("metadata %d %v", resp.StatusCode, md)
	}
	if m := md["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Fatalf("PKCE methods %v", m)
	}
}

// TestAuthorizeRefusals: each bad authorization request is refused with
// the right status and error, asks the owner nothing and stores nothing;
// a request whose client or redirect URI is not registered is never
// redirected.
func TestAuthorizeRefusals(t *testing.T) {
	a := newASTest(t, "")
	client := a.publicClient()
	_, c := pkce()
	with := func(f func(url.Values)) url.Values { q := authParams(client, c); f(q); return q }
	cases := []struct {
		name     string
		q        url.Values
		redirect bool   // the error goes to the client's redirect URI
		err      string // the error code (in the redirect or the body)
	}{
		{"missing PKCE", with(func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }), true, "invalid_request"},
		{"plain PKCE", with(func(q url.Values) { q.Set("code_challenge_method", "plain") }), true, "invalid_request"},
		{"wrong PKCE method", with(func(q url.Values) { q.Set("code_challenge_method", "S512") }), true, "invalid_request"},
		{"PKCE method missing", with(func(q url.Values) { q.Del("code_challenge_method") }), true, "invalid_request"},
		{"malformed challenge", with(func(q url.Values) { q.Set("code_challenge", "short") }), true, "invalid_request"},
		{"wrong resource", with(func(q url.Values) { q.Set("resource", "https://evil.example/mcp") }), true, "invalid_target"},
		{"two resources", with(func(q url.Values) { q["resource"] = []string{testResource, testResource + "x"} }), true, "invalid_target"},
		{"unknown scope", with(func(q url.Values) { q.Set("scope", "notes:read admin") }), true, "invalid_scope"},
		{"implicit flow", with(func(q url.Values) { q.Set("response_type", "token") }), true, "unsupported_response_type"},
		{"unregistered client", with(func(q url.Values) { q.Set("client_id", "nope") }), false, "invalid_client"},
		{"redirect mismatch", with(func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }), false, "invalid_request"},
		{"redirect path traversal", with(func(q url.Values) { q.Set("redirect_uri", testRedirect+"/../../evil") }), false, "invalid_request"},
		{"redirect suffix", with(func(q url.Values) { q.Set("redirect_uri", testRedirect+".evil.example") }), false, "invalid_request"},
		{"redirect extra query", with(func(q url.Values) { q.Set("redirect_uri", testRedirect+"?next=https://evil.example") }), false, "invalid_request"},
		{"redirect userinfo", with(func(q url.Values) { q.Set("redirect_uri", "https://client.example@evil.example/cb") }), false, "invalid_request"},
		{"two redirects", with(func(q url.Values) { q["redirect_uri"] = []string{testRedirect, "https://evil.example/cb"} }), false, "invalid_request"},
		{"no redirect", with(func(q url.Values) { q.Del("redirect_uri") }), false, "invalid_request"},
	}
	before := a.counts()
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodGet, a.srv.URL+AuthorizePath+"?"+tc.q.Encode(), nil)
		resp, body := a.do(req)
		loc := resp.Header.Get("Location")
		switch {
		case tc.redirect:
			u, _ := url.Parse(loc)
			if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound || u == nil ||
				!strings.HasPrefix(loc, testRedirect+"?") || u.Query().Get("error") != tc.err || u.Query().Get("code") != "" ||
				u.Query().Get("iss") != testIssuer {
				t.Errorf("%s: %d %q", tc.name, resp.StatusCode, loc)
			}
		default:
			if loc != "" || resp.StatusCode < 400 || body["error"] != tc.err {
				t.Errorf("%s: %d Location %q body %v", tc.name, resp.StatusCode, loc, body)
			}
		}
	}
	if len(a.consent.asked) != 0 {
		t.Fatalf("the owner was asked about %d bad requests", len(a.consent.asked))
	}
	if after := a.counts(); after != before {
		t.Fatalf("refused requests changed the store: %v → %v", before, after)
	}
	// The owner's refusal goes back to the client as access_denied.
	a.consent.decision = Denied
	if _, loc := a.authorize(authParams(client, c)); loc == nil || loc.Query().Get("error") != "access_denied" || loc.Query().Get("code") != "" {
		t.Fatalf("denied: %v", loc)
	}
	if after := a.counts(); after != before {
		t.Fatalf("a denied request changed the store: %v → %v", before, after)
	}
}

// TestTokenRefusals: bad code exchanges are refused and issue nothing.
func TestTokenRefusals(t *testing.T) {
	a := newASTest(t, "")
	client := a.publicClient()
	other := a.publicClient()
	v, c := pkce()
	cases := []struct {
		name string
		edit func(url.Values)
		err  string
	}{
		{"verifier mismatch", func(f url.Values) { f.Set("code_verifier", randomString(32)) }, "invalid_grant"},
		{"missing verifier", func(f url.Values) { f.Del("code_verifier") }, "invalid_grant"},
		{"redirect mismatch", func(f url.Values) { f.Set("redirect_uri", "https://client.example/other") }, "invalid_grant"},
		{"other client", func(f url.Values) { f.Set("client_id", other) }, "invalid_grant"},
		{"unknown client", func(f url.Values) { f.Set("client_id", "nope") }, "invalid_client"},
		{"wrong resource", func(f url.Values) { f.Set("resource", "https://evil.example/mcp") }, "invalid_target"},
		{"unknown code", func(f url.Values) { f.Set("code", "ory_ac_nope.nope") }, "invalid_grant"},
	}
	for _, tc := range cases {
		f := exchange(client, a.code(client, c), v)
		tc.edit(f)
		before := a.counts()
		st, out := a.token(f)
		if st < 400 || st >= 500 || out["error"] != tc.err || out["access_token"] != nil {
			t.Errorf("%s: %d %v", tc.name, st, out)
		}
		if after := a.counts(); after[2] != before[2] || after[3] != before[3] {
			t.Errorf("%s issued tokens: %v → %v", tc.name, before, after)
		}
	}
}

// TestCodeReuseRevokesTheGrant: a code redeemed twice is refused the
// second time and the tokens of the first redemption stop working.
func TestCodeReuseRevokesTheGrant(t *testing.T) {
	a := newASTest(t, "")
	client := a.publicClient()
	v, c := pkce()
	code := a.code(client, c)
	st, out := a.token(exchange(client, code, v))
	if st != 200 {
		t.Fatalf("first: %d %v", st, out)
	}
	access := out["access_token"].(string)
	if st, out := a.token(exchange(client, code, v)); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("reuse: %d %v", st, out)
	}
	if a.valid(access) {
		t.Fatal("the access token of a reused code still works")
	}
}

func TestExpiredCodeIsRefused(t *testing.T) {
	a := newASTest(t, "")
	client := a.publicClient()
	v, c := pkce()
	code := a.code(client, c)
	a.backdate(func(s *state) map[string]tokenRecord { return s.Codes }, "authorize_code")
	if st, out := a.token(exchange(client, code, v)); st != 400 || out["error"] != "invalid_grant" || out["access_token"] != nil {
		t.Fatalf("expired code: %d %v", st, out)
	}
}

// TestRefreshRefusals: rotated-out, revoked and expired refresh tokens and
// a refresh asking for more scopes are refused.
func TestRefreshRefusals(t *testing.T) {
	t.Run("rotated out", func(t *testing.T) {
		a := newASTest(t, "")
		client, _, rt := a.tokens()
		st, out := a.token(refresh(client, rt))
		if st != 200 {
			t.Fatal(st, out)
		}
		access2, rt2 := out["access_token"].(string), out["refresh_token"].(string)
		if st, out := a.token(refresh(client, rt)); st != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("old refresh token: %d %v", st, out)
		}
		// Reuse means theft: the whole grant ends.
		if a.valid(access2) {
			t.Fatal("a reused refresh token left the grant's access token valid")
		}
		if st, _ := a.token(refresh(client, rt2)); st != 400 {
			t.Fatalf("the grant's newest refresh token after reuse: %d", st)
		}
	})
	t.Run("revoked", func(t *testing.T) {
		a := newASTest(t, "")
		client, access, rt := a.tokens()
		if st := a.revoke(client, access); st != 200 {
			t.Fatal(st)
		}
		if a.valid(access) {
			t.Fatal("revoked access token works")
		}
		if st := a.revoke(client, rt); st != 200 {
			t.Fatal(st)
		}
		if st, out := a.token(refresh(client, rt)); st != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("revoked refresh token: %d %v", st, out)
		}
	})
	t.Run("expired", func(t *testing.T) {
		a := newASTest(t, "")
		client, _, rt := a.tokens()
		a.backdate(func(s *state) map[string]tokenRecord { return s.Refresh }, "refresh_token")
		if st, out := a.token(refresh(client, rt)); st != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("expired refresh token: %d %v", st, out)
		}
	})
	t.Run("scope escalation", func(t *testing.T) {
		a := newASTest(t, "")
		client, _, rt := a.tokens()
		f := refresh(client, rt)
		f.Set("scope", "notes:read notes:write")
		before := a.counts()
		if st, out := a.token(f); st != 400 || out["error"] != "invalid_scope" {
			t.Fatalf("escalation: %d %v", st, out)
		}
		if after := a.counts(); after != before {
			t.Fatalf("escalation changed the store: %v → %v", before, after)
		}
		f.Set("scope", "notes:read")
		if st, out := a.token(f); st != 200 || out["scope"] != "notes:read okf:read" {
			t.Fatalf("a narrower refresh: %d %v", st, out)
		}
	})
	t.Run("other client", func(t *testing.T) {
		a := newASTest(t, "")
		_, _, rt := a.tokens()
		if st, out := a.token(refresh(a.publicClient(), rt)); st != 400 || out["error"] != "invalid_grant" {
			t.Fatalf("another client's refresh token: %d %v", st, out)
		}
	})
}

// TestForeignTokensAreRefused: tokens of another authorization server
// (another secret), refresh tokens and codes are not access tokens.
func TestForeignTokensAreRefused(t *testing.T) {
	a := newASTest(t, "")
	b := newASTest(t, "")
	_, access, rt := a.tokens()
	if b.valid(access) {
		t.Fatal("another issuer's access token accepted")
	}
	if a.valid(rt) {
		t.Fatal("a refresh token accepted as an access token")
	}
	client := a.publicClient()
	_, c := pkce()
	if a.valid(a.code(client, c)) {
		t.Fatal("a code accepted as an access token")
	}
	for _, junk := range []string{"", "x", strings.Repeat("a", 5000), "ory_at_.", access + "x"} {
		if a.valid(junk) {
			t.Errorf("%.20q accepted", junk)
		}
	}
}

// TestStateSurvivesRestart: clients, grants and revocations are on disk,
// private, and a new server on the same directory honours them.
func TestStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	a := newASTest(t, dir)
	client, access, rt := a.tokens()
	client2, revoked, _ := a.tokens()
	if st := a.revoke(client2, revoked); st != 200 {
		t.Fatal(st)
	}
	b := newASTest(t, dir)
	if !b.valid(access) {
		t.Fatal("an access token did not survive the restart")
	}
	if b.valid(revoked) {
		t.Fatal("a revoked token came back after the restart")
	}
	if st, out := b.token(refresh(client, rt)); st != 200 {
		t.Fatalf("refresh after restart: %d %v", st, out)
	}
	for name, want := range map[string]os.FileMode{"oauth": 0o700, "oauth/state.json": 0o600, "oauth/token-secret": 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v", name, fi.Mode(), err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "oauth", "state.json"))
	for _, secret := range []string{access, rt, strings.SplitN(access, ".", 2)[0]} {
		if strings.Contains(string(raw), secret) {
			t.Fatal("the state file holds a token")
		}
	}
}
