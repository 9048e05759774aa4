package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// grant registers a client named name and runs the authorization with the
// owner passphrase; it returns the client and its tokens.
func (s *oauthServer) grant(name string) (client, access, refresh string) {
	s.t.Helper()
	// Joplin is unreachable here: the page offers only "all notebooks".
	return s.grantWith(name, "notes:read", url.Values{"all_notebooks": {"1"}})
}

// grantWith is grant for scopes, with the notebook boxes of choice.
func (s *oauthServer) grantWith(name, scopes string, choice url.Values) (client, access, refresh string) {
	s.t.Helper()
	const origin, redirect = "https://notes.example.com", "https://client.example/cb"
	resp, raw := s.send(http.MethodPost, "/oauth/register", `{"redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none","client_name":"`+name+`"}`,
		map[string]string{"Content-Type": "application/json"})
	m := regexp.MustCompile(`"client_id":"([^"]+)"`).FindStringSubmatch(raw)
	if resp.StatusCode != 201 || m == nil {
		s.t.Fatalf("register: %d %s", resp.StatusCode, raw)
	}
	client = m[1]
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"ops-state-123"}, "scope": {scopes}, "resource": {origin + "/mcp"}}.Encode()
	resp, page := s.send(http.MethodGet, "/oauth/authorize?"+q, "", nil)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if resp.StatusCode != 200 || csrf == nil {
		s.t.Fatalf("consent page: %d", resp.StatusCode)
	}
	cookie, _, _ := strings.Cut(resp.Header.Get("Set-Cookie"), ";")
	passphrase, _ := os.ReadFile(filepath.Join(s.state, "owner-passphrase"))
	form := url.Values{"csrf": {csrf[1]}, "passphrase": {strings.TrimSpace(string(passphrase))}, "decision": {"approve"}}
	for k, v := range choice {
		form[k] = v
	}
	approve := form.Encode()
	resp, _ = s.send(http.MethodPost, "/oauth/authorize?"+q, approve, map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie, "Origin": origin})
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc == nil || loc.Query().Get("code") == "" {
		s.t.Fatalf("approve: %d", resp.StatusCode)
	}
	st, tok := s.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {loc.Query().Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {origin + "/mcp"}})
	if st != 200 {
		s.t.Fatalf("token: %d %v", st, tok)
	}
	return client, tok["access_token"].(string), tok["refresh_token"].(string)
}

// session opens an MCP session with an access token; it returns the
// headers of the session's later requests.
func (s *oauthServer) session(access string) map[string]string {
	s.t.Helper()
	resp, raw := s.mcp("Bearer "+access, initialize(1, "2025-06-18"), nil)
	if resp.StatusCode != 200 {
		s.t.Fatalf("initialize: %d %s", resp.StatusCode, raw)
	}
	h := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-06-18"}
	s.mcp("Bearer "+access, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	return h
}

// listTools is one tools/list in an open session; it returns the status.
func (s *oauthServer) listTools(access string, h map[string]string) (int, string) {
	s.t.Helper()
	resp, _ := s.mcp("Bearer "+access, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, h)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestOAuthOperatorRevokeWhileServing: `notebridge oauth grants` lists the
// grant (client, scopes, times; no token); `oauth revoke GRANT`, run by
// another process while serve runs, refuses the grant's next request in
// its open MCP session, and the server's next save does not undo it;
// `oauth revoke CLIENT` removes a client with its grants.
func TestOAuthOperatorRevokeWhileServing(t *testing.T) {
	s := startOAuthServer(t)
	client, access, refresh := s.grant("Ops client")
	other, keep, _ := s.grant("Other client")
	h, hKeep := s.session(access), s.session(keep)
	if st, _ := s.listTools(access, h); st != 200 {
		t.Fatalf("tools/list before revoke: %d", st)
	}

	out, errOut, code := runCLI(t, "oauth", "grants", "--state-dir", s.state)
	if code != 0 || !strings.Contains(out, client) || !strings.Contains(out, `"Ops client"`) || !strings.Contains(out, "notes:read") {
		t.Fatalf("oauth grants: %d %s %s", code, out, errOut)
	}
	for _, secret := range []string{access, refresh, keep} {
		key, sig, _ := strings.Cut(secret, ".")
		if strings.Contains(out, key) || strings.Contains(out, sig) {
			t.Fatal("oauth grants printed a token or a signature")
		}
	}
	grantID := ""
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == client {
			grantID = f[0]
		}
	}
	if out, errOut, code := runCLI(t, "oauth", "revoke", grantID, "--state-dir", s.state); code != 0 || !strings.Contains(out, "revoked grant") {
		t.Fatalf("oauth revoke: %d %s %s", code, out, errOut)
	}
	if st, ch := s.listTools(access, h); st != 401 || !strings.Contains(ch, `error="invalid_token"`) {
		t.Fatalf("the open session after the grant was revoked: %d %q", st, ch)
	}
	s.grant("Third client") // the server saves its state
	if st, _ := s.listTools(access, h); st != 401 {
		t.Fatalf("the server's save undid the revocation: %d", st)
	}
	if st, tok := s.form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {refresh}}); st != 400 || tok["error"] != "invalid_grant" {
		t.Fatalf("refresh of the revoked grant: %d %v", st, tok)
	}
	if st, _ := s.listTools(keep, hKeep); st != 200 {
		t.Fatalf("another grant's session: %d", st)
	}

	if out, errOut, code := runCLI(t, "oauth", "revoke", other, "--state-dir", s.state); code != 0 || !strings.Contains(out, "revoked client") {
		t.Fatalf("oauth revoke CLIENT: %d %s %s", code, out, errOut)
	}
	if st, _ := s.listTools(keep, hKeep); st != 401 {
		t.Fatalf("the revoked client's session: %d", st)
	}
	out, _, _ = runCLI(t, "oauth", "clients", "--state-dir", s.state)
	if strings.Contains(out, other) || !strings.Contains(out, client) || !strings.Contains(out, `"Third client"`) {
		t.Fatalf("oauth clients after revoking one: %s", out)
	}
}

// TestOAuthOperatorRotateSecretWhileServing: `oauth rotate-secret` makes
// every token invalid at once in the running server, in open sessions
// too; a new authorization works with the new secret.
func TestOAuthOperatorRotateSecretWhileServing(t *testing.T) {
	s := startOAuthServer(t)
	client, access, refresh := s.grant("Rotate client")
	h := s.session(access)
	if out, errOut, code := runCLI(t, "oauth", "rotate-secret", "--state-dir", s.state); code != 0 || !strings.Contains(out, "rotated") {
		t.Fatalf("oauth rotate-secret: %d %s %s", code, out, errOut)
	}
	if st, _ := s.listTools(access, h); st != 401 {
		t.Fatalf("an access token from before the rotation: %d", st)
	}
	if st, tok := s.form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {refresh}}); st != 400 && st != 401 {
		t.Fatalf("a refresh token from before the rotation: %d %v", st, tok)
	}
	_, fresh, _ := s.grant("After rotation")
	if st, _ := s.listTools(fresh, s.session(fresh)); st != 200 {
		t.Fatalf("a token issued after the rotation: %d", st)
	}
	if out, _, _ := runCLI(t, "oauth", "grants", "--state-dir", s.state); strings.Contains(out, "Rotate client") {
		t.Fatalf("a grant survived the rotation: %s", out)
	}
}

// TestOAuthOperatorRefusals: bad invocations and unknown IDs are clear
// errors that change nothing; a request addressed to another host cannot
// register a client.
func TestOAuthOperatorRefusals(t *testing.T) {
	s := startOAuthServer(t)
	_, access, _ := s.grant("Kept client")
	h := s.session(access)
	before, _ := os.ReadFile(filepath.Join(s.state, "oauth", "state.json"))
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"oauth"}, 2, "usage: notebridge oauth"},
		{[]string{"oauth", "revoke", "--state-dir", s.state}, 2, "needs a grant or client ID"},
		{[]string{"oauth", "frobnicate", "--state-dir", s.state}, 2, `unknown command "oauth frobnicate"`},
		{[]string{"oauth", "revoke", "no-such-grant", "--state-dir", s.state}, 1, "no client or live grant"},
		{[]string{"oauth", "revoke", "--", "-no-such-client", "--state-dir", s.state}, 1, `no client or live grant "-no-such-client"`},
		{[]string{"oauth", "grants", "--state-dir", t.TempDir()}, 1, "no OAuth state"},
	}
	for _, c := range cases {
		if _, errOut, code := runCLI(t, c.args...); code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %s", c.args, code, errOut)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.base+"/oauth/register",
		strings.NewReader(`{"redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"none"}`))
	req.Host = "evil.example"
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(string(raw), `"invalid_request"`) {
		t.Fatalf("registration for evil.example: %d %s", resp.StatusCode, raw)
	}
	if after, _ := os.ReadFile(filepath.Join(s.state, "oauth", "state.json")); string(after) != string(before) {
		t.Fatal("a refused command or request changed the state")
	}
	if st, _ := s.listTools(access, h); st != 200 {
		t.Fatalf("the kept grant: %d", st)
	}
}

// TestOAuthOperatorListsGrantPastItsCode: `oauth grants` and `oauth
// clients` keep showing a grant once its authorization code's 5 minutes
// have passed (the state is aged by 6 minutes, as a clock moved on would
// leave it), while its access token still works; the listing shows its
// last use.
func TestOAuthOperatorListsGrantPastItsCode(t *testing.T) {
	s := startOAuthServer(t)
	client, access, _ := s.grant("Aged client")
	ageOAuthState(t, s.state, 6*time.Minute)
	h := s.session(access)
	if st, _ := s.listTools(access, h); st != 200 {
		t.Fatalf("the aged grant's access token: %d", st)
	}
	out, errOut, code := runCLI(t, "oauth", "grants", "--state-dir", s.state)
	var row []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == client {
			row = f
		}
	}
	if code != 0 || row == nil || row[len(row)-1] == "-" {
		t.Fatalf("oauth grants once the code expired (want the grant, with its last use): %d %s %s", code, out, errOut)
	}
	out, _, _ = runCLI(t, "oauth", "clients", "--state-dir", s.state)
	if !regexp.MustCompile(regexp.QuoteMeta(client) + `\s.*\s1\s+https://client\.example/cb`).MatchString(out) {
		t.Fatalf("oauth clients once the code expired (want 1 grant): %s", out)
	}
}

// ageOAuthState moves every expiry and request time of the state in
// stateDir back by d, under the state's lock: the state a clock d later
// would see.
func ageOAuthState(t *testing.T, stateDir string, d time.Duration) {
	t.Helper()
	path := filepath.Join(stateDir, "oauth", "state.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	var age func(v any)
	age = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok {
					if tm, err := time.Parse(time.RFC3339Nano, s); err == nil && (k == "requested_at" || k == "created" || strings.Contains(k, "_")) {
						v[k] = tm.Add(-d).Format(time.RFC3339Nano)
						continue
					}
				}
				age(x)
			}
		case []any:
			for _, x := range v {
				age(x)
			}
		}
	}
	age(st)
	raw, _ = json.Marshal(st)
	if err := os.WriteFile(path+".aged", raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".aged", path); err != nil {
		t.Fatal(err)
	}
}
