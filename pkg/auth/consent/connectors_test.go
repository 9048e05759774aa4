package consent

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

const (
	issuer   = "https://notes.example.com"
	resource = issuer + "/mcp"
)

// connector is a client's registration as the client sends it, and the
// redirect URI and scope of its authorization request.
type connector struct {
	name     string
	doc      map[string]any // RFC 7591 registration, or the client ID metadata document
	cimd     bool           // doc is served at its client_id URL instead of registered
	redirect string
	scope    string
	site     string // the registrable domain the consent page must show
}

// connectors are the registrations of ChatGPT's and Claude's connectors,
// from their documentation and the requests they were reported to send:
// Claude's hosted connector registers with client_secret_post and no
// scope (anthropics/claude-ai-mcp#1043, anthropics/claude-code#8001) and
// uses the callback on claude.ai or claude.com; Claude's client ID
// metadata documents declare auth method none; ChatGPT registers a public
// client with its legacy fixed callback or a per-connector
// /connector/oauth/<callback id> one (reported in
// makeplane/plane-mcp-server#165 and BasedHardware/omi#8824).
func connectors() []connector {
	both := []any{"authorization_code", "refresh_token"}
	all := "notes:read notes:write okf:read okf:write"
	claude := func(cb string) map[string]any {
		return map[string]any{"client_name": "Claude", "redirect_uris": []any{cb}, "grant_types": both,
			"response_types": []any{"code"}, "token_endpoint_auth_method": "client_secret_post"}
	}
	chatgpt := func(cb string) map[string]any {
		return map[string]any{"client_name": "ChatGPT", "redirect_uris": []any{cb}, "grant_types": both,
			"response_types": []any{"code"}, "token_endpoint_auth_method": "none", "scope": all}
	}
	return []connector{
		{name: "Claude (claude.ai)", doc: claude("https://claude.ai/api/mcp/auth_callback"),
			redirect: "https://claude.ai/api/mcp/auth_callback", scope: all, site: "claude.ai"},
		{name: "Claude (claude.com)", doc: claude("https://claude.com/api/mcp/auth_callback"),
			redirect: "https://claude.com/api/mcp/auth_callback", scope: all, site: "claude.com"},
		{name: "Claude (client ID metadata document)", cimd: true, doc: map[string]any{
			"client_name": "Claude", "grant_types": both, "response_types": []any{"code"}, "token_endpoint_auth_method": "none",
			"redirect_uris": []any{"https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"}},
			redirect: "https://claude.com/api/mcp/auth_callback", scope: "notes:read okf:read", site: "claude.com"},
		{name: "ChatGPT (fixed callback)", doc: chatgpt("https://chatgpt.com/connector_platform_oauth_redirect"),
			redirect: "https://chatgpt.com/connector_platform_oauth_redirect", scope: all, site: "chatgpt.com"},
		{name: "ChatGPT (per-connector callback)", doc: chatgpt("https://chatgpt.com/connector/oauth/OUbdUMlL15Ct"),
			redirect: "https://chatgpt.com/connector/oauth/OUbdUMlL15Ct", scope: all, site: "chatgpt.com"},
	}
}

// TestConnectorsCompleteTheFlow registers each connector as it registers
// itself, shows the owner the consent page (the site and the client's
// claim), approves with the passphrase, and exchanges and refreshes the
// code the client receives (with iss) for tokens of the MCP resource.
func TestConnectorsCompleteTheFlow(t *testing.T) {
	for _, c := range connectors() {
		t.Run(c.name, func(t *testing.T) { runConnector(t, c) })
	}
}

func runConnector(t *testing.T, c connector) {
	var docServer *httptest.Server
	var cimdTesting oauthserver.CIMDTesting
	if c.cimd {
		docServer = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(c.doc)
		}))
		t.Cleanup(docServer.Close)
		c.doc["client_id"] = docServer.URL + "/oauth/claude-client.json"
		roots := x509.NewCertPool()
		roots.AddCert(docServer.Certificate())
		cimdTesting = oauthserver.CIMDTesting{AllowLoopback: true, RootCAs: roots}
	}
	page, err := New(Config{Hash: testHash()})
	if err != nil {
		t.Fatal(err)
	}
	as, err := oauthserver.New(oauthserver.Config{Issuer: issuer, Resource: resource, StateDir: t.TempDir(), Consent: page,
		CIMDTesting: cimdTesting})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for p, h := range as.Routes() {
		mux.Handle(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// Registration.
	clientID, secret := "", ""
	if c.cimd {
		clientID = c.doc["client_id"].(string)
	} else {
		raw, _ := json.Marshal(c.doc)
		status, out := postJSON(t, srv.URL+oauthserver.RegisterPath, string(raw))
		if status != http.StatusCreated {
			t.Fatalf("registration: %d %v", status, out)
		}
		clientID, _ = out["client_id"].(string)
		secret, _ = out["client_secret"].(string)
		if (c.doc["token_endpoint_auth_method"] == "none") != (secret == "") {
			t.Fatalf("registration: auth method %v, secret issued %v", c.doc["token_endpoint_auth_method"], secret != "")
		}
	}

	// The consent page: the site, the full host, the name as a claim.
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {c.redirect},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"connector-state-1"}, "scope": {c.scope}, "resource": {resource}}.Encode()
	ct := &consentTest{t: t, srv: srv}
	resp, body, cookie, csrf := ct.show(q)
	if resp.StatusCode != http.StatusOK || csrf == "" {
		t.Fatalf("consent page: %d", resp.StatusCode)
	}
	for _, want := range []string{"<h2>" + c.site + "</h2>", "calls itself <strong>Claude</strong>", "not verified"} {
		if strings.HasPrefix(c.name, "ChatGPT") {
			want = strings.Replace(want, "Claude", "ChatGPT", 1)
		}
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	// Approval: the code comes back to the exact redirect URI, with iss.
	resp, _ = ct.submit(q, cookie, approve(csrf, passphrase))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc == nil || !strings.HasPrefix(loc.String(), c.redirect+"?") ||
		loc.Query().Get("code") == "" || loc.Query().Get("state") != "connector-state-1" || loc.Query().Get("iss") != issuer {
		t.Fatalf("approval: %d %v", resp.StatusCode, loc)
	}

	// Code → tokens → refresh, authenticated as the client registered.
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {c.redirect},
		"code_verifier": {verifier}, "client_id": {clientID}, "resource": {resource}}
	if secret != "" {
		form.Set("client_secret", secret)
	}
	status, tok := postForm(t, srv.URL+oauthserver.TokenPath, form)
	if status != http.StatusOK || tok["access_token"] == nil || tok["refresh_token"] == nil || tok["scope"] != c.scope {
		t.Fatalf("token: %d %v", status, tok)
	}
	p, err := as.VerifyAccessToken(t.Context(), tok["access_token"].(string))
	if err != nil || p.ClientID != clientID || len(p.Audience) != 1 || p.Audience[0] != resource || p.Expires.Before(time.Now()) {
		t.Fatalf("access token: %+v %v", p, err)
	}
	form = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}}
	if secret != "" {
		form.Set("client_secret", secret)
	}
	status, renewed := postForm(t, srv.URL+oauthserver.TokenPath, form)
	if status != http.StatusOK || renewed["access_token"] == nil || renewed["access_token"] == tok["access_token"] ||
		renewed["refresh_token"] == tok["refresh_token"] {
		t.Fatalf("refresh: %d %v", status, renewed)
	}
	if _, err := as.VerifyAccessToken(t.Context(), renewed["access_token"].(string)); err != nil {
		t.Fatalf("refreshed access token: %v", err)
	}
}

func postJSON(t *testing.T, u, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, resp)
}

func postForm(t *testing.T, u string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, resp)
}

func decode(t *testing.T, resp *http.Response) (int, map[string]any) {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}
