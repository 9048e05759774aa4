package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// sessions are the owner's signed-in browsers. A session is named by a
// random cookie value; only its SHA-256 digest is kept. It ends after
// idle without a request, or maxAge after sign-in, whichever is first,
// and at sign-out. At most max live at once (a new sign-in ends the
// oldest). Each session holds the CSRF tokens of the forms it was shown:
// a token is valid once, for the form's action only.
type sessions struct {
	mu      sync.Mutex
	idle    time.Duration
	maxAge  time.Duration
	max     int
	now     func() time.Time
	byHash  map[[32]byte]*session
	signIns int // sign-ins so far; orders sessions for eviction
}

type session struct {
	started, seen time.Time
	order         int
	// forms maps the digest of each outstanding CSRF token to the path it
	// may post to (digests, so no lookup compares a secret).
	forms     map[[32]byte]string
	formOrder [][32]byte
}

// maxForms bounds the outstanding CSRF tokens of one session (its oldest
// go first): an owner with many tabs open re-loads an old one.
const maxForms = 64

func newSessions(idle, maxAge time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{idle: idle, maxAge: maxAge, max: max, now: now, byHash: map[[32]byte]*session{}}
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// start signs a browser in and returns its cookie value.
func (s *sessions) start() string {
	v := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	for len(s.byHash) >= s.max {
		var oldest [32]byte
		first := true
		for h, e := range s.byHash {
			if first || e.order < s.byHash[oldest].order {
				oldest, first = h, false
			}
		}
		delete(s.byHash, oldest)
	}
	s.signIns++
	s.byHash[sha256.Sum256([]byte(v))] = &session{started: now, seen: now, order: s.signIns, forms: map[[32]byte]string{}}
	return v
}

// expire drops the sessions past their idle time or age. The caller
// holds mu.
func (s *sessions) expire(now time.Time) {
	for h, e := range s.byHash {
		if s.dead(e, now) {
			delete(s.byHash, h)
		}
	}
}

func (s *sessions) dead(e *session, now time.Time) bool {
	return !now.Before(e.seen.Add(s.idle)) || !now.Before(e.started.Add(s.maxAge))
}

// touch reports whether cookie names a live session, and counts the
// request as its latest.
func (s *sessions) touch(cookie string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := sha256.Sum256([]byte(cookie))
	e, ok := s.byHash[h]
	if !ok {
		return false
	}
	now := s.now()
	if s.dead(e, now) {
		delete(s.byHash, h)
		return false
	}
	e.seen = now
	return true
}

// end signs the session of cookie out.
func (s *sessions) end(cookie string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byHash, sha256.Sum256([]byte(cookie)))
}

// issue returns a new CSRF token of the session of cookie for a form
// posting to action ("" when the session is gone).
func (s *sessions) issue(cookie, action string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byHash[sha256.Sum256([]byte(cookie))]
	if !ok {
		return ""
	}
	if len(e.formOrder) >= maxForms {
		delete(e.forms, e.formOrder[0])
		e.formOrder = e.formOrder[1:]
	}
	t := randomToken()
	h := sha256.Sum256([]byte(t))
	e.forms[h] = action
	e.formOrder = append(e.formOrder, h)
	return t
}

// consume uses up token, reporting whether the session of cookie issued
// it for a form posting to action. A token is used up even when posted to
// another action: a form that was tampered with is spent.
func (s *sessions) consume(cookie, token, action string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byHash[sha256.Sum256([]byte(cookie))]
	if !ok || token == "" {
		return false
	}
	h := sha256.Sum256([]byte(token))
	want, ok := e.forms[h]
	if !ok {
		return false
	}
	delete(e.forms, h)
	for i, t := range e.formOrder {
		if t == h {
			e.formOrder = append(e.formOrder[:i], e.formOrder[i+1:]...)
			break
		}
	}
	return want == action
}
