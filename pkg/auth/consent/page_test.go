package consent

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

const (
	passphrase = "correct-horse-battery"
	redirect   = "https://client.example/cb"
)

var testHash = sync.OnceValue(func() Hash {
	h, err := ParseHash(HashPassphrase(passphrase))
	if err != nil {
		panic(err)
	}
	return h
})

type consentTest struct {
	t      *testing.T
	srv    *httptest.Server
	client string
	now    time.Time
	page   *Page
	dir    string // the authorization server's state directory
}

func newConsentTest(t *testing.T, rate string, clientName string) *consentTest {
	t.Helper()
	ct := &consentTest{t: t, now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	page, err := New(Config{Hash: testHash(), Rate: rate, Now: func() time.Time { return ct.now }})
	if err != nil {
		t.Fatal(err)
	}
	ct.page, ct.dir = page, t.TempDir()
	as, err := oauthserver.New(oauthserver.Config{Issuer: "https://notes.example.com", Resource: "https://notes.example.com/mcp",
		StateDir: ct.dir, Consent: page})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for p, h := range as.Routes() {
		mux.Handle(p, h)
	}
	ct.srv = httptest.NewServer(mux)
	t.Cleanup(ct.srv.Close)
	resp, err := http.Post(ct.srv.URL+oauthserver.RegisterPath, "application/json",
		strings.NewReader(`{"redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none","client_name":`+clientName+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	ct.client = regexp.MustCompile(`"client_id":"([^"]+)"`).FindStringSubmatch(string(raw))[1]
	return ct
}

func (ct *consentTest) query() string { return ct.queryFor("notes:read notes:write") }

// queryFor is an authorization request for scopes.
func (ct *consentTest) queryFor(scopes string) string {
	sum := sha256.Sum256([]byte("verifier-verifier-verifier-verifier-verifier"))
	return url.Values{"response_type": {"code"}, "client_id": {ct.client}, "redirect_uri": {redirect},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"state-0123456789"}, "scope": {scopes}}.Encode()
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// show GETs the page and returns the response, body, cookie and CSRF token.
func (ct *consentTest) show(query string) (*http.Response, string, *http.Cookie, string) {
	ct.t.Helper()
	return ct.showFrom("", query)
}

// showFrom is show from client address addr (X-Forwarded-For from the
// loopback peer; none when empty).
func (ct *consentTest) showFrom(addr, query string) (*http.Response, string, *http.Cookie, string) {
	ct.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ct.srv.URL+oauthserver.AuthorizePath+"?"+query, nil)
	if addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		ct.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(raw))
	csrf := ""
	if m != nil {
		csrf = m[1]
	}
	return resp, string(raw), cookie, csrf
}

func (ct *consentTest) submit(query string, cookie *http.Cookie, form url.Values) (*http.Response, string) {
	ct.t.Helper()
	return ct.submitFrom("", query, cookie, form)
}

// submitFrom is submit from client address addr (as showFrom).
func (ct *consentTest) submitFrom(addr, query string, cookie *http.Cookie, form url.Values) (*http.Response, string) {
	ct.t.Helper()
	resp, body, err := ct.post(addr, query, cookie, form)
	if err != nil {
		ct.t.Fatal(err)
	}
	return resp, body
}

// post is submitFrom for any goroutine: it returns the error.
func (ct *consentTest) post(addr, query string, cookie *http.Cookie, form url.Values) (*http.Response, string, error) {
	req, _ := http.NewRequest(http.MethodPost, ct.srv.URL+oauthserver.AuthorizePath+"?"+query, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw), nil
}

func approve(csrf, pass string) url.Values {
	return url.Values{"csrf": {csrf}, "passphrase": {pass}, "decision": {"approve"}}
}

func TestPageShowsTheRequestSafely(t *testing.T) {
	ct := newConsentTest(t, "", `"<script>alert(1)</script>"`)
	resp, body, cookie, csrf := ct.show(ct.query())
	if resp.StatusCode != 200 || csrf == "" || cookie == nil || !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("page: %d csrf %q cookie %+v", resp.StatusCode, csrf, cookie)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "client.example", ct.client, "notes:read", "notes:write", `type="password"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "http://") || strings.Contains(body, "src=") {
		t.Error("the page has a script or an external asset")
	}
	h := resp.Header
	if csp := h.Get("Content-Security-Policy"); csp != "default-src 'none'; form-action 'self' https://client.example; frame-ancestors 'none'; base-uri 'none'" {
		t.Errorf("CSP %q", csp)
	}
	for k, v := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "Cache-Control": "no-store"} {
		if h.Get(k) != v {
			t.Errorf("%s = %q", k, h.Get(k))
		}
	}
}

func TestApproveAndDeny(t *testing.T) {
	ct := newConsentTest(t, "", `"Client"`)
	q := ct.query()
	_, _, cookie, csrf := ct.show(q)
	resp, _ := ct.submit(q, cookie, approve(csrf, passphrase))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc == nil || !strings.HasPrefix(loc.String(), redirect+"?") || loc.Query().Get("code") == "" {
		t.Fatalf("approve: %d %v", resp.StatusCode, loc)
	}
	_, _, cookie, csrf = ct.show(q)
	resp, _ = ct.submit(q, cookie, url.Values{"csrf": {csrf}, "decision": {"deny"}})
	loc, _ = url.Parse(resp.Header.Get("Location"))
	if loc == nil || loc.Query().Get("error") != "access_denied" || loc.Query().Get("code") != "" {
		t.Fatalf("deny: %d %v", resp.StatusCode, loc)
	}
}

// TestCSRFRefusals: a POST without the cookie, without or with a wrong
// CSRF token, with a token of another request or with extra fields is
// refused and issues no code, even with the right passphrase.
func TestCSRFRefusals(t *testing.T) {
	ct := newConsentTest(t, "", `"Client"`)
	q := ct.query()
	_, _, cookie, csrf := ct.show(q)
	other := strings.Replace(q, "notes%3Aread+notes%3Awrite", "notes%3Aread", 1)
	_, _, otherCookie, otherCSRF := ct.show(other)
	extra := approve(csrf, passphrase)
	extra.Set("note", "x")
	override := approve(csrf, passphrase)
	override.Set("client_id", "evil")
	cases := []struct {
		name   string
		query  string
		cookie *http.Cookie
		form   url.Values
		status int
	}{
		{"no csrf", q, cookie, url.Values{"passphrase": {passphrase}, "decision": {"approve"}}, 403},
		{"wrong csrf", q, cookie, approve("AAAA"+csrf[4:], passphrase), 403},
		{"no cookie", q, nil, approve(csrf, passphrase), 403},
		{"other cookie", q, otherCookie, approve(csrf, passphrase), 403},
		{"token of another request", q, otherCookie, approve(otherCSRF, passphrase), 403},
		{"extra field", q, cookie, extra, 400},
		{"body overrides the client", q, cookie, override, 401},
		{"no decision", q, cookie, url.Values{"csrf": {csrf}, "passphrase": {passphrase}}, 400},
	}
	for _, c := range cases {
		resp, body := ct.submit(c.query, c.cookie, c.form)
		if resp.StatusCode != c.status || resp.Header.Get("Location") != "" || strings.Contains(body, passphrase) {
			t.Errorf("%s: %d %q", c.name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

// TestLockout: wrong passphrases lock the address out, after which even
// the right one is refused until the lockout passes. Each refusal is
// reported (the metrics count them).
func TestLockout(t *testing.T) {
	ct := newConsentTest(t, "", `"Client"`)
	var mu sync.Mutex
	refused := map[string]int{}
	ct.page.cfg.Refused = func(reason string) { mu.Lock(); refused[reason]++; mu.Unlock() }
	q := ct.query()
	for i := range 5 {
		_, _, cookie, csrf := ct.show(q)
		resp, body := ct.submit(q, cookie, approve(csrf, "wrong-"+string(rune('a'+i))))
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong passphrase") || resp.Header.Get("Location") != "" {
			t.Fatalf("wrong passphrase %d: %d", i, resp.StatusCode)
		}
	}
	resp, _, _, csrf := ct.show(q)
	if resp.StatusCode != http.StatusTooManyRequests || csrf != "" {
		t.Fatalf("page while locked out: %d", resp.StatusCode)
	}
	mu.Lock()
	if refused[RefusedWrongPassphrase] != 5 || refused[RefusedLockedOut] != 1 {
		t.Errorf("refusals reported %v, want 5 wrong passphrases and 1 lockout", refused)
	}
	mu.Unlock()
	ct.now = ct.now.Add(16 * time.Minute)
	_, _, cookie, csrf := ct.show(q)
	if resp, _ := ct.submit(q, cookie, approve(csrf, passphrase)); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the lockout: %d", resp.StatusCode)
	}
}

// TestLockoutRefusesTheRightPassphrase: once locked, a POST with a valid
// form (loaded before the lockout) and the right passphrase still gets no
// code.
func TestLockoutRefusesTheRightPassphrase(t *testing.T) {
	ct := newConsentTest(t, "", `"Client"`)
	q := ct.query()
	_, _, kept, keptCSRF := ct.show(q)
	for range 5 {
		_, _, cookie, csrf := ct.show(q)
		ct.submit(q, cookie, approve(csrf, "wrong"))
	}
	if resp, _ := ct.submit(q, kept, approve(keptCSRF, passphrase)); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Location") != "" {
		t.Fatalf("right passphrase while locked out: %d", resp.StatusCode)
	}
}

func TestRateLimit(t *testing.T) {
	ct := newConsentTest(t, "3-M", `"Client"`)
	q := ct.query()
	for range 3 {
		if resp, _, _, _ := ct.show(q); resp.StatusCode != 200 {
			t.Fatalf("within the rate: %d", resp.StatusCode)
		}
	}
	if resp, _, _, _ := ct.show(q); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("beyond the rate: %d", resp.StatusCode)
	}
}

func TestClientAddr(t *testing.T) {
	cases := []struct{ remote, xff, want string }{
		{"203.0.113.5:1234", "198.51.100.1", "203.0.113.5"},        // a public peer cannot claim another address
		{"127.0.0.1:1234", "198.51.100.1", "198.51.100.1"},         // behind a local proxy
		{"172.18.0.2:1234", "6.6.6.6, 198.51.100.1", "172.18.0.2"}, // a private peer is no proxy by default
		{"127.0.0.1:1234", "", "127.0.0.1"},
		{"127.0.0.1:1234", "junk", "invalid-forwarded-for"}, // never the proxy's own key
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := oauthserver.ClientAddr(r); got != c.want {
			t.Errorf("%s %q: %s, want %s", c.remote, c.xff, got, c.want)
		}
	}
}

func TestPassphraseHash(t *testing.T) {
	h := testHash()
	if !h.Matches(passphrase) || h.Matches(passphrase+"x") || h.Matches("") {
		t.Fatal("Matches is wrong")
	}
	p := NewPassphrase()
	if len(p) != 35 || strings.Count(p, "-") != 5 || p == NewPassphrase() {
		t.Fatalf("passphrase %q", p)
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=99999999,t=2,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$", "plain-text-passphrase"} {
		if _, err := ParseHash(bad); err == nil {
			t.Errorf("ParseHash(%q) accepted", bad)
		}
	}
}
