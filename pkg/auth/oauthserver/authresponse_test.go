package oauthserver

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestAuthorizationResponsesCarryIss (RFC 9207): the code, the owner's
// refusal and a refused request all reach the client with iss, and the
// metadata says so.
func TestAuthorizationResponsesCarryIss(t *testing.T) {
	a := newASTest(t, "")
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+MetadataPath, nil)
	if _, md := a.do(req); md["authorization_response_iss_parameter_supported"] != true {
		t.Fatalf("metadata: %v", md)
	}
	client := a.publicClient()
	_, c := pkce()
	check := func(name string, q url.Values, wantCode bool) {
		t.Helper()
		resp, loc := a.authorize(q)
		if resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("iss") != testIssuer ||
			(loc.Query().Get("code") != "") != wantCode || loc.Fragment != "" {
			t.Errorf("%s: %d %v", name, resp.StatusCode, loc)
		}
	}
	check("code", authParams(client, c), true)
	q := authParams(client, c)
	q.Set("scope", "admin")
	check("invalid_scope", q, false)
	a.consent.decision = Denied
	check("access_denied", authParams(client, c), false)
}

// TestConnectorMetadata: the metadata lists "none" among the token
// endpoint's auth methods (Claude's client-ID-metadata flow needs it) and
// only the query response mode.
func TestConnectorMetadata(t *testing.T) {
	a := newASTest(t, "")
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+MetadataPath, nil)
	_, md := a.do(req)
	methods, _ := md["token_endpoint_auth_methods_supported"].([]any)
	if !slices.Contains(methods, any("none")) {
		t.Fatalf("token_endpoint_auth_methods_supported %v", methods)
	}
	if modes, _ := md["response_modes_supported"].([]any); len(modes) != 1 || modes[0] != "query" {
		t.Fatalf("response_modes_supported %v", modes)
	}
}

// TestResponseModeMatrix: a response_mode other than query is refused. To
// a trusted redirect URI (registered client, exact match) the error goes
// as a query-string redirect with state and iss; otherwise it is an error
// page. Never a fragment or a form_post page, never a code, and the owner
// is not asked.
func TestResponseModeMatrix(t *testing.T) {
	a := newASTest(t, "")
	client := a.publicClient()
	_, c := pkce()
	with := func(f func(url.Values)) url.Values { q := authParams(client, c); f(q); return q }
	mode := func(m string) url.Values { return with(func(q url.Values) { q.Set("response_mode", m) }) }
	cases := []struct {
		name     string
		q        url.Values
		redirect bool
		err      string
	}{
		{"fragment", mode("fragment"), true, "unsupported_response_mode"},
		{"form_post", mode("form_post"), true, "unsupported_response_mode"},
		{"web_message", mode("web_message"), true, "unsupported_response_mode"},
		{"query.jwt (JARM)", mode("query.jwt"), true, "unsupported_response_mode"},
		{"upper-case FRAGMENT", mode("FRAGMENT"), true, "unsupported_response_mode"},
		{"query and fragment", with(func(q url.Values) { q["response_mode"] = []string{"query", "fragment"} }), true, "unsupported_response_mode"},
		{"fragment to an unregistered redirect", with(func(q url.Values) {
			q.Set("response_mode", "fragment")
			q.Set("redirect_uri", "https://evil.example/cb")
		}), false, "invalid_request"},
		{"form_post for an unknown client", with(func(q url.Values) {
			q.Set("response_mode", "form_post")
			q.Set("client_id", "nope")
			q.Set("redirect_uri", "https://evil.example/cb")
		}), false, "unsupported_response_mode"},
		{"fragment for an unknown client", with(func(q url.Values) {
			q.Set("response_mode", "fragment")
			q.Set("client_id", "nope")
		}), false, "unsupported_response_mode"},
	}
	before := a.counts()
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodGet, a.srv.URL+AuthorizePath+"?"+tc.q.Encode(), nil)
		resp, body := a.do(req)
		loc := resp.Header.Get("Location")
		if strings.Contains(resp.Header.Get("Content-Type"), "html") || strings.Contains(loc, "#") {
			t.Errorf("%s: a form_post page or a fragment: %q %q", tc.name, resp.Header.Get("Content-Type"), loc)
		}
		if tc.redirect {
			u, _ := url.Parse(loc)
			if resp.StatusCode != http.StatusSeeOther || u == nil || !strings.HasPrefix(loc, testRedirect+"?") ||
				u.Query().Get("error") != tc.err || u.Query().Get("iss") != testIssuer ||
				u.Query().Get("state") != "state-123456789" || u.Query().Get("code") != "" {
				t.Errorf("%s: %d %q", tc.name, resp.StatusCode, loc)
			}
			continue
		}
		if resp.StatusCode != http.StatusBadRequest || loc != "" || body["error"] != tc.err {
			t.Errorf("%s: %d Location %q body %v", tc.name, resp.StatusCode, loc, body)
		}
	}
	if len(a.consent.asked) != 0 {
		t.Fatalf("the owner was asked about %d refused requests", len(a.consent.asked))
	}
	if after := a.counts(); after != before {
		t.Fatalf("refused requests changed the store: %v → %v", before, after)
	}
	// query, named or empty, is the code flow's own mode.
	for _, m := range []string{"query", ""} {
		if resp, loc := a.authorize(mode(m)); loc == nil || loc.Query().Get("code") == "" || loc.Query().Get("iss") != testIssuer {
			t.Errorf("response_mode=%q: %d %v", m, resp.StatusCode, loc)
		}
	}
}
