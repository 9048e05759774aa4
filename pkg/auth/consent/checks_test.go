package consent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// countChecks makes the page count its passphrase checks (each still a
// real argon2id check) and returns the counter.
func (ct *consentTest) countChecks() *atomic.Int64 {
	var n atomic.Int64
	h := testHash()
	ct.page.matches = func(p string) bool {
		n.Add(1)
		return h.Matches(p)
	}
	return &n
}

// failures is the failure count the lockout holds for addr.
func (ct *consentTest) failures(addr string) int {
	a := ct.page.attempts
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.m[addr]; e != nil {
		return e.failed
	}
	return 0
}

// form is one consent form as the browser holds it.
type form struct {
	cookie *http.Cookie
	csrf   string
}

// forms loads n consent forms from addr.
func (ct *consentTest) forms(addr, q string, n int) []form {
	ct.t.Helper()
	out := make([]form, n)
	for i := range out {
		resp, _, cookie, csrf := ct.showFrom(addr, q)
		if resp.StatusCode != 200 || cookie == nil || csrf == "" {
			ct.t.Fatalf("form %d from %s: %d", i, addr, resp.StatusCode)
		}
		out[i] = form{cookie, csrf}
	}
	return out
}

// result is one concurrent post's answer.
type result struct {
	status int
	retry  string
	err    error
}

// postAll posts every form at once from addrs[i], each with passphrase,
// and returns the answers in arrival order.
func (ct *consentTest) postAll(q string, addrs []string, forms []form, pass string) <-chan result {
	out := make(chan result, len(forms))
	for i, f := range forms {
		go func() {
			resp, _, err := ct.post(addrs[i], q, f.cookie, approve(f.csrf, pass))
			if err != nil {
				out <- result{err: err}
				return
			}
			out <- result{status: resp.StatusCode, retry: resp.Header.Get("Retry-After")}
		}()
	}
	return out
}

func repeat(addr string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = addr
	}
	return out
}

// TestConcurrentWrongPassphrasesHashFiveTimes: 30 wrong passphrases
// posted at once from one address, each with its own valid form, run
// exactly 5 argon2id checks (the lockout's count is reserved before the
// hash); the other 25 are refused with 429, and the address is locked.
func TestConcurrentWrongPassphrasesHashFiveTimes(t *testing.T) {
	ct := newConsentTest(t, "1000-M", `"Client"`)
	ct.page.gate = oauthserver.NewGate(2, time.Hour) // however slow the checks, none is turned away
	ct.page.nonces = newNonces(10*time.Minute, 100, 60, func() time.Time { return ct.now })
	checks := ct.countChecks()
	const addr = "198.51.100.7"
	q := ct.query()
	forms := ct.forms(addr, q, 30)
	statuses := map[int]int{}
	results := ct.postAll(q, repeat(addr, 30), forms, "wrong-passphrase")
	for range forms {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		statuses[r.status]++
	}
	if checks.Load() != 5 || statuses[http.StatusUnauthorized] != 5 || statuses[http.StatusTooManyRequests] != 25 {
		t.Fatalf("checks %d, statuses %v", checks.Load(), statuses)
	}
	if !ct.page.attempts.locked(addr) || ct.failures(addr) != 5 {
		t.Fatalf("after the burst: %d failures", ct.failures(addr))
	}
}

// TestPassphraseChecksAreBounded: with 2 slots, 10 posts from 10
// addresses at once never run more than 2 checks together; the 8 that
// find no slot in time get 429 with Retry-After, no check and no failure,
// and can approve with the form shown again.
func TestPassphraseChecksAreBounded(t *testing.T) {
	ct := newConsentTest(t, "1000-M", `"Client"`)
	ct.page.gate = oauthserver.NewGate(2, 20*time.Millisecond)
	var inFlight, peak, calls atomic.Int64
	release := make(chan struct{})
	ct.page.matches = func(string) bool {
		calls.Add(1)
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if n > peak.Load() {
			peak.Store(n)
		}
		if n <= 2 {
			<-release // hold the slot until the others were answered
		}
		return false
	}
	q := ct.query()
	var addrs []string
	var forms []form
	for i := range 10 {
		addrs = append(addrs, fmt.Sprintf("203.0.113.%d", i+1))
		forms = append(forms, ct.forms(addrs[i], q, 1)...)
	}
	results := ct.postAll(q, addrs, forms, "wrong")
	statuses := map[string]int{}
	for range 8 {
		r := <-results
		statuses[fmt.Sprintf("%d retry=%s", r.status, r.retry)]++
	}
	close(release)
	for range 2 {
		r := <-results
		statuses[fmt.Sprintf("%d retry=%s", r.status, r.retry)]++
	}
	if peak.Load() != 2 || calls.Load() != 2 || statuses["429 retry=1"] != 8 || statuses["401 retry="] != 2 {
		t.Fatalf("peak %d, calls %d, answers %v", peak.Load(), calls.Load(), statuses)
	}
	failed := 0
	for _, a := range addrs {
		failed += ct.failures(a)
	}
	if failed != 2 {
		t.Fatalf("%d failures counted, want the 2 checks that ran", failed)
	}
}

// TestNonceRules: a form is single-use, bound to the address that loaded
// it and valid for NonceTTL; a form replayed from another address stays
// usable from its own.
func TestNonceRules(t *testing.T) {
	ct := newConsentTest(t, "1000-M", `"Client"`)
	checks := ct.countChecks()
	q := ct.query()
	const owner, other = "198.51.100.10", "198.51.100.20"
	f := ct.forms(owner, q, 1)[0]
	if resp, body := ct.submitFrom(other, q, f.cookie, approve(f.csrf, passphrase)); resp.StatusCode != 403 || !strings.Contains(body, "another network address") || checks.Load() != 0 {
		t.Fatalf("replay from another address: %d, %d checks", resp.StatusCode, checks.Load())
	}
	if resp, _ := ct.submitFrom(owner, q, f.cookie, approve(f.csrf, "wrong")); resp.StatusCode != 401 || checks.Load() != 1 {
		t.Fatalf("the owner's wrong passphrase: %d, %d checks", resp.StatusCode, checks.Load())
	}
	if resp, body := ct.submitFrom(owner, q, f.cookie, approve(f.csrf, passphrase)); resp.StatusCode != 403 || !strings.Contains(body, "already used") || checks.Load() != 1 || resp.Header.Get("Location") != "" {
		t.Fatalf("the form again: %d, %d checks", resp.StatusCode, checks.Load())
	}
	f = ct.forms(owner, q, 1)[0]
	ct.now = ct.now.Add(10*time.Minute + time.Second)
	if resp, _ := ct.submitFrom(owner, q, f.cookie, approve(f.csrf, passphrase)); resp.StatusCode != 403 || checks.Load() != 1 {
		t.Fatalf("an expired form: %d, %d checks", resp.StatusCode, checks.Load())
	}
	f = ct.forms(owner, q, 1)[0]
	if resp, _ := ct.submitFrom(owner, q, f.cookie, approve(f.csrf, passphrase)); resp.StatusCode != http.StatusSeeOther || checks.Load() != 2 {
		t.Fatalf("a fresh form: %d", resp.StatusCode)
	}
}

// TestConsentRefusals is the negative matrix of the passphrase and form
// bounds: each refusal has its status and message, runs no check, counts
// no failure and issues no code.
func TestConsentRefusals(t *testing.T) {
	ct := newConsentTest(t, "1000-M", `"Client"`)
	checks := ct.countChecks()
	q := ct.query()
	const addr = "198.51.100.30"
	type setup func() (postFrom string, f form)
	used := func(decision url.Values) setup {
		return func() (string, form) {
			f := ct.forms(addr, q, 1)[0]
			decision.Set("csrf", f.csrf)
			ct.submitFrom(addr, q, f.cookie, decision)
			return addr, f
		}
	}
	cases := []struct {
		name   string
		setup  setup
		status int
		says   string
		retry  string
	}{
		{"form from another address", func() (string, form) { return "198.51.100.31", ct.forms(addr, q, 1)[0] }, 403, "another network address", ""},
		{"form used by a wrong passphrase", used(approve("", "wrong")), 403, "already used", ""},
		{"form used by a denial", used(url.Values{"decision": {"deny"}}), 403, "already used", ""},
		{"form used by an approval", used(approve("", passphrase)), 403, "already used", ""},
		{"expired form", func() (string, form) {
			f := ct.forms(addr, q, 1)[0]
			ct.now = ct.now.Add(11 * time.Minute)
			return addr, f
		}, 403, "expired", ""},
		{"form evicted past MaxNoncesPerKey", func() (string, form) {
			ct.page.nonces = newNonces(10*time.Minute, 100, 3, func() time.Time { return ct.now })
			f := ct.forms(addr, q, 4)
			return addr, f[0]
		}, 403, "expired", ""},
		{"forms while checks are in flight use up the address", func() (string, form) {
			for range 5 {
				ct.page.attempts.reserve(addr)
			}
			return addr, ct.forms(addr, q, 1)[0]
		}, 429, "Too many wrong passphrases", "900"},
		{"no check slot in time", func() (string, form) {
			ct.page.gate = oauthserver.NewGate(1, time.Millisecond)
			_ = ct.page.gate.Enter(t.Context())
			return addr, ct.forms(addr, q, 1)[0]
		}, 429, "Wait a moment", "1"},
		{"no room to remember another address", func() (string, form) {
			ct.page.attempts = newAttempts(5, 15*time.Minute, 1, func() time.Time { return ct.now })
			ct.page.attempts.reserve("192.0.2.99") // a check in flight elsewhere
			return addr, ct.forms(addr, q, 1)[0]
		}, 429, "Too many addresses", "900"},
	}
	for _, c := range cases {
		from, f := c.setup()
		before, failedBefore := checks.Load(), ct.failures(addr)
		resp, body := ct.submitFrom(from, q, f.cookie, approve(f.csrf, passphrase))
		if resp.StatusCode != c.status || !strings.Contains(body, c.says) || resp.Header.Get("Retry-After") != c.retry ||
			resp.Header.Get("Location") != "" || checks.Load() != before || ct.failures(addr) != failedBefore {
			t.Errorf("%s: %d %q retry %q, checks %d→%d, failures %d→%d", c.name, resp.StatusCode, body, resp.Header.Get("Retry-After"),
				before, checks.Load(), failedBefore, ct.failures(addr))
		}
		// Back to a clean page for the next case.
		ct.page.attempts = newAttempts(5, 15*time.Minute, 10000, func() time.Time { return ct.now })
		ct.page.gate = oauthserver.NewGate(2, 2*time.Second)
	}
}

// TestCancelledWaitGivesTheAttemptBack: a post whose request ends while
// it waits for a check slot runs no check and counts no failure.
func TestCancelledWaitGivesTheAttemptBack(t *testing.T) {
	ct := newConsentTest(t, "1000-M", `"Client"`)
	checks := ct.countChecks()
	ct.page.gate = oauthserver.NewGate(1, time.Hour)
	if err := ct.page.gate.Enter(t.Context()); err != nil {
		t.Fatal(err)
	}
	const addr = "192.0.2.44"
	q := ct.query()
	nonce, _ := ct.page.nonces.issue(addr, addr, offerDigest{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, oauthserver.AuthorizePath+"?"+q, strings.NewReader(approve(ct.page.csrf(nonce, q), passphrase).Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = addr + ":4444"
	r.AddCookie(&http.Cookie{Name: cookieName, Value: nonce})
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	d := ct.page.Decide(w, r, oauthserver.ConsentRequest{ClientID: ct.client, RedirectURI: redirect})
	ct.page.attempts.mu.Lock()
	_, kept := ct.page.attempts.m[addr]
	ct.page.attempts.mu.Unlock()
	if d != oauthserver.Pending || w.Code != http.StatusTooManyRequests || checks.Load() != 0 || kept {
		t.Fatalf("cancelled wait: decision %v, %d, %d checks, reservation kept %v", d, w.Code, checks.Load(), kept)
	}
}
