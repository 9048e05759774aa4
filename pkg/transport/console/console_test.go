package console

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/consent"
	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

const (
	origin     = "https://notes.example.com"
	passphrase = "correct-horse-battery"
	work       = "11111111111111111111111111111111"
	clients    = "22222222222222222222222222222222" // below Work
	home       = "33333333333333333333333333333333"
)

var hash = sync.OnceValue(func() consent.Hash {
	h, err := consent.ParseHash(consent.HashPassphrase(passphrase))
	if err != nil {
		panic(err)
	}
	return h
})

// fakeGrants is one OAuth grant of "Claude" reading Work.
type fakeGrants struct {
	mu      sync.Mutex
	sc      notebookscope.Scope
	revoked []string
	sets    int
}

func (f *fakeGrants) Grants() ([]oauthserver.GrantInfo, error) {
	return []oauthserver.GrantInfo{{ID: "grant-1", ClientID: "client-1", ClientName: "Claude", Scopes: []string{"notes:read"},
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}, nil
}

func (f *fakeGrants) Clients() ([]oauthserver.ClientInfo, error) {
	return []oauthserver.ClientInfo{{ID: "client-1", Name: "Claude", RedirectURIs: []string{"https://claude.ai/api/mcp/auth_callback"}}}, nil
}

func (f *fakeGrants) GrantNotebooks(string) (notebookscope.Scope, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sc, nil
}

func (f *fakeGrants) SetGrantNotebooks(_ string, sc notebookscope.Scope, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sc, f.sets = sc, f.sets+1
	return nil
}

func (f *fakeGrants) Revoke(id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, id)
	return "grant", nil
}

// fakeOwner answers joplin_status, and undo with a conflict.
type fakeOwner struct{}

func (fakeOwner) Call(_ context.Context, name string, args json.RawMessage) (json.RawMessage, *domainerr.Error) {
	switch name {
	case "undo_note_changes":
		return nil, domainerr.New("UNDO_CONFLICT", "the note changed since the edit")
	case "joplin_status":
		return json.RawMessage(`{"reachable":true,"authenticated":true,"message":"ok","sync":null}`), nil
	}
	return nil, domainerr.New(domainerr.UnknownOperation, "unknown")
}

type fakeLog []activity.Entry

func (l fakeLog) Read(f activity.Filter) ([]activity.Entry, error) { return l, nil }

type harness struct {
	t      *testing.T
	c      *Console
	grants *fakeGrants
	now    time.Time
	mu     sync.Mutex
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, grants: &fakeGrants{sc: notebookscope.New(notebookscope.Only(work), notebookscope.Only(work))},
		now: time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)}
	checker, err := consent.NewChecker(consent.Config{Hash: hash(), Now: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	tree := notebookscope.NewTree([]notebookscope.Folder{{ID: work, Title: "Work"}, {ID: clients, ParentID: work, Title: "Clients"}, {ID: home, Title: "Home"}})
	receipt := "r1"
	c, err := New(Config{Origin: origin, Checker: checker, Owner: fakeOwner{}, NoteTitle: func(context.Context, string) (string, bool) { return "Quarterly plan", true }, Now: h.clock,
		OpenGrants: func() (Grants, error) { return h.grants, nil },
		Notebooks:  func(context.Context) (*notebookscope.Tree, error) { return tree, nil },
		Activity: fakeLog{{Time: h.now, Credential: "oauth", Client: "Claude", Tool: "edit_note", Outcome: "ok",
			Notes: []string{"44444444444444444444444444444444"}, Receipt: &receipt}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

func (h *harness) clock() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.now }

func (h *harness) advance(d time.Duration) { h.mu.Lock(); h.now = h.now.Add(d); h.mu.Unlock() }

// do serves one request; cookies are sent as given.
func (h *harness) do(method, path string, form url.Values, hdr map[string]string, cookies ...*http.Cookie) (*http.Response, string) {
	h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, origin+path, body)
	r.RemoteAddr = "192.0.2.7:5555"
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == http.MethodPost {
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for k, v := range hdr {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	h.c.ServeHTTP(w, r)
	resp := w.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func cookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// signIn signs in and returns the session cookie.
func (h *harness) signIn() *http.Cookie {
	h.t.Helper()
	resp, body := h.do("GET", "/owner/signin", nil, nil)
	m := csrfField.FindStringSubmatch(body)
	sc := cookie(resp, signinCookie)
	if m == nil || sc == nil {
		h.t.Fatalf("sign-in form: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do("POST", "/owner/signin", url.Values{"csrf": {m[1]}, "passphrase": {passphrase}}, nil, sc)
	s := cookie(resp, sessionCookie)
	if resp.StatusCode != http.StatusSeeOther || s == nil {
		h.t.Fatalf("sign in: %d %s", resp.StatusCode, body)
	}
	return s
}

// formToken returns the CSRF token of the form posting to action on page.
func (h *harness) formToken(s *http.Cookie, page, action string) string {
	h.t.Helper()
	_, body := h.do("GET", page, nil, nil, s)
	re := regexp.MustCompile(`action="` + regexp.QuoteMeta(action) + `"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		h.t.Fatalf("no form to %s on %s: %s", action, page, body)
	}
	return m[1]
}

func TestSignIn(t *testing.T) {
	h := newHarness(t)
	resp, body := h.do("GET", "/owner/signin", nil, nil)
	sc := cookie(resp, signinCookie)
	m := csrfField.FindStringSubmatch(body)
	resp, body = h.do("POST", "/owner/signin", url.Values{"csrf": {m[1]}, "passphrase": {"wrong"}}, nil, sc)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong passphrase") || cookie(resp, sessionCookie) != nil {
		t.Fatalf("wrong passphrase: %d %v", resp.StatusCode, resp.Cookies())
	}
	// The form is single-use: the wrong attempt spent it.
	resp, _ = h.do("POST", "/owner/signin", url.Values{"csrf": {m[1]}, "passphrase": {passphrase}}, nil, sc)
	if resp.StatusCode != http.StatusForbidden || cookie(resp, sessionCookie) != nil {
		t.Fatalf("replayed sign-in form: %d", resp.StatusCode)
	}
	s := h.signIn()
	if !s.HttpOnly || !s.Secure || s.SameSite != http.SameSiteStrictMode || s.Path != "/" || s.MaxAge != 0 {
		t.Fatalf("session cookie attributes: %+v", s)
	}
	resp, body = h.do("GET", "/owner/apps", nil, nil, s)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Claude") || !strings.Contains(body, "claude.ai") {
		t.Fatalf("apps page: %d %s", resp.StatusCode, body)
	}
}

func TestSignInLockout(t *testing.T) {
	h := newHarness(t)
	for i := range 6 {
		resp, body := h.do("GET", "/owner/signin", nil, nil)
		m := csrfField.FindStringSubmatch(body)
		if m == nil {
			if i == 5 && resp.StatusCode == http.StatusTooManyRequests {
				return // locked out before the form
			}
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
		resp, _ = h.do("POST", "/owner/signin", url.Values{"csrf": {m[1]}, "passphrase": {"wrong"}}, nil, cookie(resp, signinCookie))
		if i < 5 && resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
		if i == 5 && resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("sixth wrong passphrase: %d, want 429", resp.StatusCode)
		}
	}
}

func TestRefusals(t *testing.T) {
	h := newHarness(t)
	s := h.signIn()
	revoke := func(token string, hdr map[string]string, cookies ...*http.Cookie) int {
		resp, _ := h.do("POST", "/owner/apps/revoke", url.Values{"csrf": {token}, "grant": {"grant-1"}}, hdr, cookies...)
		return resp.StatusCode
	}
	t.Run("no session", func(t *testing.T) {
		resp, body := h.do("GET", "/owner/apps", nil, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/owner/signin" || strings.Contains(body, "Claude") {
			t.Fatalf("GET without session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		if code := revoke(h.formToken(s, "/owner/apps", "/owner/apps/revoke"), nil); code != http.StatusForbidden {
			t.Fatalf("POST without session: %d", code)
		}
	})
	t.Run("forged csrf", func(t *testing.T) {
		if code := revoke("forged", nil, s); code != http.StatusForbidden {
			t.Fatalf("forged token: %d", code)
		}
		if code := revoke("", nil, s); code != http.StatusForbidden {
			t.Fatalf("no token: %d", code)
		}
		// A token of another form (sign out) does not revoke.
		if code := revoke(h.formToken(s, "/owner/apps", "/owner/signout"), nil, s); code != http.StatusForbidden {
			t.Fatalf("another form's token: %d", code)
		}
		// Another session's token does not either.
		other := h.signIn()
		if code := revoke(h.formToken(other, "/owner/apps", "/owner/apps/revoke"), nil, s); code != http.StatusForbidden {
			t.Fatalf("another session's token: %d", code)
		}
	})
	t.Run("cross origin", func(t *testing.T) {
		tok := h.formToken(s, "/owner/apps", "/owner/apps/revoke")
		for _, hdr := range []map[string]string{
			{"Origin": "https://evil.example"},
			{"Origin": ""},
			{"Origin": "null"},
			{"Sec-Fetch-Site": "cross-site"},
			{"Sec-Fetch-Site": "same-site"},
		} {
			if code := revoke(tok, hdr, s); code != http.StatusForbidden {
				t.Fatalf("%v: %d", hdr, code)
			}
		}
	})
	t.Run("bearer", func(t *testing.T) {
		for _, path := range []string{"/owner/apps", "/owner/activity", "/owner/signin"} {
			resp, body := h.do("GET", path, nil, map[string]string{"Authorization": "Bearer a-static-or-oauth-token"})
			if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "Claude") {
				t.Fatalf("%s with a bearer: %d", path, resp.StatusCode)
			}
			// Even beside a live session, a bearer is refused.
			resp, _ = h.do("GET", path, nil, map[string]string{"Authorization": "Bearer x"}, s)
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("%s with a bearer and a session: %d", path, resp.StatusCode)
			}
		}
	})
	if len(h.grants.revoked) != 0 {
		t.Fatalf("a refused request revoked: %v", h.grants.revoked)
	}
	t.Run("replayed csrf", func(t *testing.T) {
		tok := h.formToken(s, "/owner/apps", "/owner/apps/revoke")
		if code := revoke(tok, nil, s); code != http.StatusOK {
			t.Fatalf("revoke: %d", code)
		}
		if code := revoke(tok, nil, s); code != http.StatusForbidden {
			t.Fatalf("replayed token: %d", code)
		}
		if len(h.grants.revoked) != 1 {
			t.Fatalf("revoked %v, want once", h.grants.revoked)
		}
	})
	t.Run("expired session", func(t *testing.T) {
		s := h.signIn()
		tok := h.formToken(s, "/owner/apps", "/owner/apps/revoke")
		h.advance(16 * time.Minute)
		resp, _ := h.do("GET", "/owner/apps", nil, nil, s)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("GET after the idle timeout: %d", resp.StatusCode)
		}
		if code := revoke(tok, nil, s); code != http.StatusForbidden {
			t.Fatalf("POST after the idle timeout: %d", code)
		}
	})
	t.Run("session age", func(t *testing.T) {
		s := h.signIn()
		for range 60 { // active all along, never idle (60 × 14 min > 12 h)
			h.advance(14 * time.Minute)
			if resp, _ := h.do("GET", "/owner/status", nil, nil, s); resp.StatusCode != http.StatusOK {
				break
			}
		}
		if resp, _ := h.do("GET", "/owner/status", nil, nil, s); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("a session past its maximum age: %d", resp.StatusCode)
		}
	})
	t.Run("signed out", func(t *testing.T) {
		s := h.signIn()
		resp, _ := h.do("POST", "/owner/signout", url.Values{"csrf": {h.formToken(s, "/owner/apps", "/owner/signout")}}, nil, s)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign out: %d", resp.StatusCode)
		}
		if resp, _ := h.do("GET", "/owner/apps", nil, nil, s); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("after sign-out: %d", resp.StatusCode)
		}
	})
}

func TestFramingHeaders(t *testing.T) {
	h := newHarness(t)
	s := h.signIn()
	for _, path := range []string{"/owner/signin", "/owner/apps", "/owner/activity", "/owner/changes", "/owner/status", "/owner/nope"} {
		resp, body := h.do("GET", path, nil, nil, s)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") ||
			strings.Contains(csp, "script-src") || resp.Header.Get("X-Frame-Options") != "DENY" ||
			resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: headers %v", path, resp.Header)
		}
		if strings.Contains(body, "<script") {
			t.Fatalf("%s carries script", path)
		}
	}
}

func TestNotebooksNarrowAtOnceWidenWithPassphrase(t *testing.T) {
	h := newHarness(t)
	s := h.signIn()
	post := func(form url.Values) (*http.Response, string) {
		form.Set("csrf", h.formToken(s, "/owner/apps/notebooks?grant=grant-1", "/owner/apps/notebooks"))
		form.Set("grant", "grant-1")
		return h.do("POST", "/owner/apps/notebooks", form, nil, s)
	}
	// Narrow: Work → Work/Clients, no passphrase.
	if resp, body := post(url.Values{"notebook": {clients}, "write_notebook": {clients}}); resp.StatusCode != http.StatusOK || h.grants.sets != 1 {
		t.Fatalf("narrowing: %d %s", resp.StatusCode, body)
	}
	if got := h.grants.sc.Read.Refs(); len(got) != 1 || got[0] != clients {
		t.Fatalf("after narrowing: %v", got)
	}
	// Widen to Home without, then with a wrong, passphrase: refused.
	for _, p := range []string{"", "wrong"} {
		if resp, _ := post(url.Values{"notebook": {clients, home}, "passphrase": {p}}); resp.StatusCode != http.StatusUnauthorized || h.grants.sets != 1 {
			t.Fatalf("widening with passphrase %q: %d, sets %d", p, resp.StatusCode, h.grants.sets)
		}
	}
	// All notebooks is wider than any list.
	if resp, _ := post(url.Values{"all_notebooks": {"1"}}); resp.StatusCode != http.StatusUnauthorized || h.grants.sets != 1 {
		t.Fatalf("widening to all: %d", resp.StatusCode)
	}
	// Dropping the write is narrowing; taking it back is widening.
	if resp, _ := post(url.Values{"notebook": {clients}}); resp.StatusCode != http.StatusOK || h.grants.sets != 2 {
		t.Fatalf("dropping the write: %d", resp.StatusCode)
	}
	if resp, _ := post(url.Values{"notebook": {clients}, "write_notebook": {clients}}); resp.StatusCode != http.StatusUnauthorized || h.grants.sets != 2 {
		t.Fatalf("adding a write back: %d", resp.StatusCode)
	}
	if resp, body := post(url.Values{"notebook": {clients, home}, "passphrase": {passphrase}}); resp.StatusCode != http.StatusOK || h.grants.sets != 3 {
		t.Fatalf("widening with the passphrase: %d %s", resp.StatusCode, body)
	}
	if resp, _ := post(url.Values{"notebook": {"not-an-id"}}); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed notebook: %d", resp.StatusCode)
	}
}

func TestWidensCountsWrites(t *testing.T) {
	tree := notebookscope.NewTree([]notebookscope.Folder{{ID: work, Title: "Work"}, {ID: clients, ParentID: work, Title: "Clients"}, {ID: home, Title: "Home"}})
	readOnly := notebookscope.New(notebookscope.Only(work), notebookscope.Selection{})
	if !widens(tree, readOnly, notebookscope.New(notebookscope.Only(work), notebookscope.Only(clients))) {
		t.Fatal("adding a write is not widening")
	}
	if widens(tree, notebookscope.Everything(), readOnly) {
		t.Fatal("narrowing from everything widens")
	}
}

func TestActivityShowsTitlesNotBodies(t *testing.T) {
	h := newHarness(t)
	s := h.signIn()
	resp, body := h.do("GET", "/owner/activity", nil, nil, s)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Quarterly plan") || !strings.Contains(body, "edit_note") {
		t.Fatalf("feed: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(body, "SECRET-BODY-MARKER") {
		t.Fatal("the feed shows a note body")
	}
}

func TestUndoRefusalShowsTheReason(t *testing.T) {
	h := newHarness(t)
	s := h.signIn()
	h.c.cfg.Changes = fakeChanges{{ID: "r1", Kind: "apply", Done: true, Notes: []ChangedNote{{ID: "n", TitleAfter: "Plan", Diff: "-a\n+b"}}}}
	tok := h.formToken(s, "/owner/changes", "/owner/changes/undo")
	resp, body := h.do("POST", "/owner/changes/undo", url.Values{"csrf": {tok}, "receipt": {"r1"}}, nil, s)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "UNDO_CONFLICT") || !strings.Contains(body, "the note changed since") {
		t.Fatalf("undo refusal: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(body, "Claude") {
		t.Fatal("the change does not name the app that made it")
	}
}

type fakeChanges []Change

func (f fakeChanges) List(context.Context) ([]Change, error) { return f, nil }
