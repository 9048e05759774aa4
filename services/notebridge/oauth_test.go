package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/auth/consent"
)

// oauthServer is a real `notebridge mcp serve --oauth` with Joplin down.
type oauthServer struct {
	t     *testing.T
	base  string
	state string
	log   *procLog
}

func startOAuthServer(t *testing.T, args ...string) *oauthServer {
	t.Helper()
	return startOAuthServerIn(t, t.TempDir(), args...)
}

// startOAuthServerIn starts it on the state directory state; later flags
// in args win.
func startOAuthServerIn(t *testing.T, state string, args ...string) *oauthServer {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"mcp", "serve", "--listen", "127.0.0.1:0", "--state-dir", state, "--oauth",
		"--joplin-url", "http://127.0.0.1:1", "--joplin-wait", "0s", "--joplin-token-file", tokenFileB(t, "joplin-token-value-0123456789")}, args...)...)
	cmd.Env = cleanEnv("HOME="+t.TempDir(), "NOTEBRIDGE_DOMAIN=notes.example.com")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrRe := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	log := readLog(stderr)
	line, ok := log.waitFor(t, addrRe.MatchString)
	if !ok {
		t.Fatalf("serve exited: %s", log.String())
	}
	return &oauthServer{t: t, base: "http://" + addrRe.FindStringSubmatch(line)[1], state: state, log: log}
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// send does one request; form bodies when form is set, else body as JSON.
func (s *oauthServer) send(method, path string, body string, h map[string]string) (*http.Response, string) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

func (s *oauthServer) mcp(auth, body string, h map[string]string) (*http.Response, string) {
	s.t.Helper()
	hh := map[string]string{"Authorization": auth, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for k, v := range h {
		hh[k] = v
	}
	return s.send(http.MethodPost, "/mcp", body, hh)
}

func (s *oauthServer) form(path string, f url.Values) (int, map[string]any) {
	s.t.Helper()
	resp, raw := s.send(http.MethodPost, path, f.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	var out map[string]any
	_ = json.Unmarshal([]byte(raw), &out)
	return resp.StatusCode, out
}

// TestOAuthEndToEnd: discovery → registration → authorization with the
// consent page and the owner passphrase → token → tools/list and
// tools/call (a read passes, a write is 403 insufficient_scope) →
// refresh (the old access token stops working) → revocation → refused.
func TestOAuthEndToEnd(t *testing.T) {
	s := startOAuthServer(t)
	const origin = "https://notes.example.com"
	passphrase, err := os.ReadFile(filepath.Join(s.state, "owner-passphrase"))
	if err != nil || !strings.Contains(s.log.String(), "secrets show owner-passphrase") || strings.Contains(s.log.String(), strings.TrimSpace(string(passphrase))) {
		t.Fatalf("passphrase: %v; log must name the command, never the passphrase: %s", err, s.log.String())
	}

	// Discovery.
	resp, _ := s.mcp("", initialize(1, "2025-06-18"), nil)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+origin+`/.well-known/oauth-protected-resource/mcp", scope="notes:read notes:write"` {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	var prm struct {
		Resource string   `json:"resource"`
		AS       []string `json:"authorization_servers"`
		Scopes   []string `json:"scopes_supported"`
	}
	_, raw := s.send(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "", nil)
	if json.Unmarshal([]byte(raw), &prm) != nil || prm.Resource != origin+"/mcp" || len(prm.AS) != 1 || prm.AS[0] != origin {
		t.Fatalf("protected resource metadata: %s", raw)
	}
	// Without --okf-roots no OKF tool is served over HTTP: no okf scope.
	if strings.Join(prm.Scopes, " ") != "notes:read notes:write" {
		t.Errorf("protected resource scopes_supported %v, want the Joplin toolset's only", prm.Scopes)
	}
	var asm map[string]any
	_, raw = s.send(http.MethodGet, "/.well-known/oauth-authorization-server", "", nil)
	if json.Unmarshal([]byte(raw), &asm) != nil || asm["issuer"] != origin || asm["registration_endpoint"] != origin+"/oauth/register" {
		t.Fatalf("authorization server metadata: %s", raw)
	}
	if got := fmt.Sprint(asm["scopes_supported"]); got != "[notes:read notes:write]" {
		t.Errorf("authorization server scopes_supported %s, want the Joplin toolset's only", got)
	}

	// Registration.
	resp, raw = s.send(http.MethodPost, "/oauth/register", `{"redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"none","client_name":"E2E"}`,
		map[string]string{"Content-Type": "application/json"})
	var reg map[string]any
	if json.Unmarshal([]byte(raw), &reg) != nil || resp.StatusCode != 201 {
		t.Fatalf("register: %d %s", resp.StatusCode, raw)
	}
	client := reg["client_id"].(string)

	// Authorization: the page, then the owner approves with the passphrase.
	verifier := "e2e-verifier-e2e-verifier-e2e-verifier-e2e-verifier"
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {"https://client.example/cb"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"e2e-state-123"}, "scope": {"notes:read"}, "resource": {origin + "/mcp"}}.Encode()
	resp, page := s.send(http.MethodGet, "/oauth/authorize?"+q, "", nil)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if resp.StatusCode != 200 || csrf == nil || !strings.Contains(page, "E2E") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	cookie := resp.Header.Get("Set-Cookie")
	cookie = cookie[:strings.Index(cookie, ";")]
	// Joplin is unreachable here: the page offers only "all notebooks",
	// and an approval sharing none is refused.
	if !strings.Contains(page, `name="all_notebooks"`) || !strings.Contains(page, "could not be listed") {
		t.Fatalf("the consent page does not ask for notebooks: %s", page)
	}
	approve := url.Values{"csrf": {csrf[1]}, "passphrase": {strings.TrimSpace(string(passphrase))}, "decision": {"approve"},
		"all_notebooks": {"1"}}.Encode()
	resp, _ = s.send(http.MethodPost, "/oauth/authorize?"+q, approve, map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie, "Origin": origin})
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Host != "client.example" || loc.Query().Get("code") == "" || loc.Query().Get("state") != "e2e-state-123" {
		t.Fatalf("approve: %d %v", resp.StatusCode, loc)
	}

	// Token.
	st, tok := s.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "code": {loc.Query().Get("code")},
		"redirect_uri": {"https://client.example/cb"}, "code_verifier": {verifier}, "resource": {origin + "/mcp"}})
	if st != 200 || tok["scope"] != "notes:read" {
		t.Fatalf("token: %d %v", st, tok)
	}
	access, refresh := "Bearer "+tok["access_token"].(string), tok["refresh_token"].(string)

	// MCP with the access token: list, read, and a refused write.
	resp, raw = s.mcp(access, initialize(1, "2025-06-18"), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, raw)
	}
	h := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-06-18"}
	s.mcp(access, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	if resp, raw := s.mcp(access, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h); resp.StatusCode != 200 || !strings.Contains(raw, "create_note") {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, raw)
	}
	if resp, raw := s.mcp(access, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}`, h); resp.StatusCode != 200 || !strings.Contains(raw, "JOPLIN_UNAVAILABLE") {
		t.Fatalf("read with notes:read: %d %s", resp.StatusCode, raw)
	}
	resp, raw = s.mcp(access, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"create_note","arguments":{"title":"x","body":"y"}}}`, h)
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="notes:read notes:write"`) || !strings.Contains(raw, "INSUFFICIENT_SCOPE") {
		t.Fatalf("write with notes:read: %d %q %s", resp.StatusCode, ch, raw)
	}

	// Refresh: a new access token; the old one is refused.
	st, tok = s.form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {refresh}})
	if st != 200 {
		t.Fatalf("refresh: %d %v", st, tok)
	}
	access2, refresh2 := "Bearer "+tok["access_token"].(string), tok["refresh_token"].(string)
	if resp, _ := s.mcp(access, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, h); resp.StatusCode != 401 {
		t.Fatalf("old access token after refresh: %d", resp.StatusCode)
	}
	if resp, raw := s.mcp(access2, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, h); resp.StatusCode != 200 {
		t.Fatalf("new access token in the grant's session: %d %s", resp.StatusCode, raw)
	}

	// Revocation ends the grant at once.
	if st, _ := s.form("/oauth/revoke", url.Values{"client_id": {client}, "token": {refresh2}}); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	if resp, _ := s.mcp(access2, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, h); resp.StatusCode != 401 {
		t.Fatalf("access token after revocation: %d", resp.StatusCode)
	}
	logged := s.log.String()
	for _, secret := range []string{strings.TrimPrefix(access, "Bearer "), refresh, refresh2, strings.TrimSpace(string(passphrase))} {
		if strings.Contains(logged, secret) {
			t.Fatal("a token or the passphrase reached the log")
		}
	}
}

// TestOAuthNeedsAPublicOrigin: --oauth without a public domain refuses to
// start, naming what is missing.
func TestOAuthNeedsAPublicOrigin(t *testing.T) {
	cmd := exec.Command(binPath, "mcp", "serve", "--listen", "127.0.0.1:0", "--state-dir", t.TempDir(), "--oauth", "--joplin-url", "http://127.0.0.1:1")
	cmd.Env = cleanEnv("HOME="+t.TempDir(), "NOTEBRIDGE_DOMAIN=localhost")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "OAuth needs a public domain") {
		t.Fatalf("started without a public origin: %v %s", err, out)
	}
}

// TestSecretsInitCreatesThePassphrase: secrets init writes the owner
// passphrase and its argon2id hash (0600), prints neither, and secrets
// show prints the passphrase.
func TestSecretsInitCreatesThePassphrase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	out, err := exec.Command(binPath, "secrets", "init", "--dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v", out, err)
	}
	plain, _ := os.ReadFile(filepath.Join(dir, "owner-passphrase"))
	hashRaw, _ := os.ReadFile(filepath.Join(dir, "owner-passphrase.argon2id"))
	p := strings.TrimSpace(string(plain))
	h, err := consent.ParseHash(string(hashRaw))
	if err != nil || !h.Matches(p) || strings.Contains(string(hashRaw), p) || strings.Contains(string(out), p) {
		t.Fatalf("passphrase %q hash %v: %s", p, err, out)
	}
	for _, name := range []string{"owner-passphrase", "owner-passphrase.argon2id"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", name, fi, err)
		}
	}
	shown, err := exec.Command(binPath, "secrets", "show", "owner-passphrase", "--dir", dir).Output()
	if err != nil || strings.TrimSpace(string(shown)) != p {
		t.Fatalf("secrets show owner-passphrase: %v", err)
	}
	if _, err := exec.Command(binPath, "secrets", "init", "--dir", dir).Output(); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "owner-passphrase")); string(again) != string(plain) {
		t.Fatal("a second secrets init replaced the passphrase")
	}
}
