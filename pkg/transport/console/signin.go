package console

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/consent"
	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// signins are the sign-in forms handed out: the form's cookie and its
// hidden field carry one random value, valid once and for ttl. At most
// max are outstanding (past it the oldest go), so the memory they take
// is bounded whatever callers do.
type signins struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	now   func() time.Time
	live  map[[32]byte]time.Time
	order [][32]byte
}

func newSignins(ttl time.Duration, max int, now func() time.Time) *signins {
	return &signins{ttl: ttl, max: max, now: now, live: map[[32]byte]time.Time{}}
}

func (s *signins) issue() string {
	v := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.order) > 0 && (len(s.live) >= s.max || !s.now().Before(s.live[s.order[0]])) {
		delete(s.live, s.order[0])
		s.order = s.order[1:]
	}
	h := sha256.Sum256([]byte(v))
	s.live[h] = s.now().Add(s.ttl)
	s.order = append(s.order, h)
	return v
}

// consume uses up v when it is outstanding and unexpired.
func (s *signins) consume(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := sha256.Sum256([]byte(v))
	exp, ok := s.live[h]
	delete(s.live, h)
	return ok && s.now().Before(exp)
}

func (c *Console) signinForm(w http.ResponseWriter, r *http.Request) {
	c.showSignin(w, http.StatusOK, "")
}

func (c *Console) showSignin(w http.ResponseWriter, status int, problem string) {
	v := c.signins.issue()
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: v, Path: "/", Secure: true, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(c.signins.ttl / time.Second)})
	c.render(w, status, "signin", page{Title: "Sign in", Error: problem, CSRF: v})
}

// signin checks a posted passphrase: the form's token must match its
// cookie and be unused, then the passphrase goes through the checker
// the consent page uses (its rate limit and lockout count both pages).
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	addr := oauthserver.ClientAddr(r)
	if v := c.cfg.Checker.Admit(r.Context(), addr); v != consent.Admitted {
		c.refuse(w, v)
		return
	}
	ck, err := r.Cookie(signinCookie)
	token := r.PostForm.Get("csrf")
	if err != nil || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(token)) != 1 || !c.signins.consume(token) {
		c.showSignin(w, http.StatusForbidden, "This form expired or was already used. Try again.")
		return
	}
	switch v := c.cfg.Checker.Check(r.Context(), addr, r.PostForm.Get("passphrase")); v {
	case consent.Right:
	case consent.Wrong:
		c.showSignin(w, http.StatusUnauthorized, v.Message())
		return
	case consent.Busy:
		w.Header().Set("Retry-After", c.cfg.Checker.RetryAfter(v))
		c.showSignin(w, http.StatusTooManyRequests, v.Message())
		return
	default:
		c.refuse(w, v)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: "", Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: c.sessions.start(), Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/owner/apps", http.StatusSeeOther)
}

// refuse answers a refused address (rate limit, lockout) with 429.
func (c *Console) refuse(w http.ResponseWriter, v consent.Verdict) {
	if ra := c.cfg.Checker.RetryAfter(v); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	c.message(w, http.StatusTooManyRequests, v.Message())
}

func (c *Console) signout(w http.ResponseWriter, req request) {
	c.sessions.end(req.cookie)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, req.Request, "/owner/signin", http.StatusSeeOther)
}
