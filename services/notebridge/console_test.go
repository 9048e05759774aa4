package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// signInConsole signs in to the console of s with the owner passphrase
// and returns the session's Cookie header.
func (s *oauthServer) signInConsole() string {
	s.t.Helper()
	resp, page := s.send(http.MethodGet, "/owner/signin", "", nil)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if resp.StatusCode != 200 || csrf == nil {
		s.t.Fatalf("sign-in page: %d %s", resp.StatusCode, page)
	}
	cookie, _, _ := strings.Cut(resp.Header.Get("Set-Cookie"), ";")
	passphrase, _ := os.ReadFile(filepath.Join(s.state, "owner-passphrase"))
	resp, _ = s.send(http.MethodPost, "/owner/signin", url.Values{"csrf": {csrf[1]}, "passphrase": {strings.TrimSpace(string(passphrase))}}.Encode(),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie, "Origin": "https://notes.example.com", "Sec-Fetch-Site": "same-origin"})
	session := ""
	for _, c := range resp.Cookies() {
		if c.Name == "__Host-notebridge-owner" {
			session = c.Name + "=" + c.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == "" {
		s.t.Fatalf("sign in: %d", resp.StatusCode)
	}
	return session
}

// TestConsoleRevokesAnOpenSession: with --oauth the console is on; the
// owner signs in, sees the grant a client just made, revokes it, and the
// client's next request in its open MCP session gets 401. A bearer token,
// static or OAuth, does not open the console.
func TestConsoleRevokesAnOpenSession(t *testing.T) {
	s := startOAuthServer(t)
	client, access, _ := s.grant("Console client")
	h := s.session(access)
	if st, _ := s.listTools(access, h); st != 200 {
		t.Fatalf("tools/list: %d", st)
	}
	staticToken, _ := os.ReadFile(filepath.Join(s.state, "mcp-token"))
	for _, auth := range []string{"Bearer " + access, "Bearer " + strings.TrimSpace(string(staticToken))} {
		resp, body := s.send(http.MethodGet, "/owner/apps", "", map[string]string{"Authorization": auth})
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "Console client") {
			t.Fatalf("a bearer opened the console: %d", resp.StatusCode)
		}
	}
	session := s.signInConsole()
	resp, page := s.send(http.MethodGet, "/owner/apps", "", map[string]string{"Cookie": session})
	if resp.StatusCode != 200 || !strings.Contains(page, "Console client") || !strings.Contains(page, "client.example") || !strings.Contains(page, "All notebooks") {
		t.Fatalf("apps page: %d %s", resp.StatusCode, page)
	}
	grant := regexp.MustCompile(`name="grant" value="([^"]+)"`).FindStringSubmatch(page)
	csrf := regexp.MustCompile(`action="/owner/apps/revoke"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if grant == nil || csrf == nil {
		t.Fatalf("no revoke form: %s", page)
	}
	key, sig, _ := strings.Cut(access, ".")
	if strings.Contains(page, key) || strings.Contains(page, sig) || !strings.Contains(page, client) {
		t.Fatal("the apps page shows a token, or not the client id")
	}
	resp, page = s.send(http.MethodPost, "/owner/apps/revoke", url.Values{"csrf": {csrf[1]}, "grant": {grant[1]}}.Encode(),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": session, "Origin": "https://notes.example.com"})
	if resp.StatusCode != 200 || !strings.Contains(page, "Revoked Console client") {
		t.Fatalf("revoke: %d %s", resp.StatusCode, page)
	}
	if st, ch := s.listTools(access, h); st != 401 || !strings.Contains(ch, `error="invalid_token"`) {
		t.Fatalf("the open session after revoking in the console: %d %q", st, ch)
	}
}

// TestConsoleShowsWhatAnAppDid: the console reads the real activity log.
// A grant's get_note and the static MCP token's list_notebooks appear in
// the feed, the note named by its current title (looked up when the page
// is shown), and each credential's calls of the last 24 hours are counted
// on the apps page.
func TestConsoleShowsWhatAnAppDid(t *testing.T) {
	_, joplinURL, tf := joplinfake.Serve(t, "fake-joplin-token-0123456789")
	nb := fakeFolder(t, joplinURL, tf, "Home", "")
	s := startOAuthServer(t, "--joplin-url", joplinURL, "--joplin-token-file", tf)
	_, access, _ := s.grantWith("Feed client", "notes:read notes:write", url.Values{"notebook": {nb}, "write_notebook": {nb}})
	h := s.session(access)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_note","arguments":{"notebook_id":%q,"title":"Before rename","body":"x"}}}`, nb)
	resp, raw := s.mcp("Bearer "+access, body, h)
	id := regexp.MustCompile(`\\"id\\":\\"([0-9a-f]{32})\\"`).FindStringSubmatch(raw)
	if resp.StatusCode != 200 || id == nil {
		t.Fatalf("create_note: %d %s", resp.StatusCode, raw)
	}
	s.toolCall(access, h, "get_note", fmt.Sprintf(`{"id":%q}`, id[1]))
	s.toolCall(access, h, "update_note", fmt.Sprintf(`{"id":%q,"title":"Kitchen plans"}`, id[1]))
	static := readStaticToken(t, s.state)
	s.toolCall(static, s.session(static), "list_notebooks", `{}`)

	session := s.signInConsole()
	resp, page := s.send(http.MethodGet, "/owner/activity", "", map[string]string{"Cookie": session})
	if resp.StatusCode != 200 || strings.Count(page, `class="entry"`) != 4 || !strings.Contains(page, `<td class="tool">get_note</td>`) ||
		!strings.Contains(page, `<td class="tool">list_notebooks</td>`) || !strings.Contains(page, "Kitchen plans") || strings.Contains(page, "Before rename") ||
		!strings.Contains(page, "Feed client (its own claim)") || !strings.Contains(page, "MCP bearer token") {
		t.Fatalf("activity page: %d %s", resp.StatusCode, page)
	}
	resp, page = s.send(http.MethodGet, "/owner/activity?tool=get_note", "", map[string]string{"Cookie": session})
	if resp.StatusCode != 200 || strings.Count(page, `class="entry"`) != 1 {
		t.Fatalf("activity filtered by tool: %d %s", resp.StatusCode, page)
	}
	resp, page = s.send(http.MethodGet, "/owner/apps", "", map[string]string{"Cookie": session})
	if resp.StatusCode != 200 || !strings.Contains(page, `<dd class="calls">3</dd>`) || !strings.Contains(page, "<dt>Calls, last 24 h</dt><dd>1</dd>") {
		t.Fatalf("apps page calls: %d %s", resp.StatusCode, page)
	}
}
