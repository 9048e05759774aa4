package consent

import (
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// attempts counts the passphrase checks of each client key
// (oauthserver.ClientKey: an IPv4 address or an IPv6 /64) for the lockout. A check is reserved before it runs, so concurrent posts from
// one address run at most max checks before the lockout; a wrong
// passphrase turns its reservation into a failure, the right one clears
// the failures, and a check that did not run gives its reservation back.
// Failures are forgotten lockout after the latest; at most maxAddrs keys
// are remembered. When that many are live, a new key takes the place of
// the one with the fewest failures (the oldest latest failure among
// equals) and no check in flight, so a flood of failing keys cannot keep
// a key that has not failed from checking; only when every entry has a
// check in flight is the new key refused.
type attempts struct {
	mu       sync.Mutex
	max      int
	lockout  time.Duration
	maxAddrs int
	now      func() time.Time
	m        map[string]*attempt
}

type attempt struct {
	failed, pending int
	last            time.Time // of the latest failure
}

// outcome is how a reserved check ended.
type outcome int

const (
	checkWrong  outcome = iota // the passphrase was wrong
	checkRight                 // the passphrase was right
	checkNotRun                // no check ran (no slot in time, request gone)
)

func newAttempts(max int, lockout time.Duration, maxAddrs int, now func() time.Time) *attempts {
	return &attempts{max: max, lockout: lockout, maxAddrs: maxAddrs, now: now, m: map[string]*attempt{}}
}

// expire forgets failures older than the lockout. The caller holds mu.
func (a *attempts) expire(e *attempt, now time.Time) {
	if e.failed > 0 && !now.Before(e.last.Add(a.lockout)) {
		e.failed = 0
	}
}

// locked reports whether key has used up its failures.
func (a *attempts) locked(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.m[key]
	if e == nil {
		return false
	}
	a.expire(e, a.now())
	return e.failed >= a.max
}

// reservation is what reserve decided.
type reservation int

const (
	reserved    reservation = iota
	spent                   // the address has no failure left, counting checks in flight
	tableIsFull             // no further address can be remembered
)

// reserve counts a check for key before it runs.
func (a *attempts) reserve(key string) reservation {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	e := a.m[key]
	if e == nil {
		if len(a.m) >= a.maxAddrs {
			a.prune(now)
		}
		if len(a.m) >= a.maxAddrs && !a.evictOne() {
			return tableIsFull
		}
		e = &attempt{}
		a.m[key] = e
	}
	a.expire(e, now)
	if e.failed+e.pending >= a.max {
		return spent
	}
	e.pending++
	return reserved
}

// settle ends a reservation of key.
func (a *attempts) settle(key string, o outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.m[key]
	if e == nil {
		return
	}
	e.pending--
	switch o {
	case checkWrong:
		e.failed++
		e.last = a.now()
	case checkRight:
		e.failed = 0
	}
	if e.failed == 0 && e.pending == 0 {
		delete(a.m, key)
	}
}

// prune drops the keys with nothing in flight and no failure left
// to remember. The caller holds mu.
func (a *attempts) prune(now time.Time) {
	for key, e := range a.m {
		a.expire(e, now)
		if e.failed == 0 && e.pending == 0 {
			delete(a.m, key)
		}
	}
}

// evictOne forgets the entry with the fewest failures, the oldest latest
// failure among equals, that has no check in flight. It reports whether
// one was found. The caller holds mu.
func (a *attempts) evictOne() bool {
	var victim string
	var v *attempt
	for k, e := range a.m {
		if e.pending > 0 {
			continue
		}
		if v == nil || e.failed < v.failed || e.failed == v.failed && e.last.Before(v.last) {
			victim, v = k, e
		}
	}
	if v == nil {
		return false
	}
	delete(a.m, victim)
	return true
}

// checkPassphrase runs the argon2id check of a posted approval. The
// attempt is reserved first: an address with no failure left, or one the
// full address table cannot hold, gets 429 and no check. Then a slot of
// the global gate is awaited; none in time gives 429 with Retry-After,
// the form again and the reservation back. key is the client's
// oauthserver.ClientKey.
func (p *Page) checkPassphrase(w http.ResponseWriter, r *http.Request, req oauthserver.ConsentRequest, key string) oauthserver.Decision {
	switch p.attempts.reserve(key) {
	case spent:
		p.lockedOut(w)
		return oauthserver.Pending
	case tableIsFull:
		w.Header().Set("Retry-After", strconv.Itoa(int(p.cfg.Lockout/time.Second)))
		p.message(w, http.StatusTooManyRequests, "Too many addresses have tried passphrases recently. Try again later.")
		return oauthserver.Pending
	}
	if err := p.gate.Enter(r.Context()); err != nil {
		p.attempts.settle(key, checkNotRun)
		w.Header().Set("Retry-After", strconv.Itoa(p.gate.RetryAfter()))
		p.form(w, r, req, http.StatusTooManyRequests, "Many passphrases are being checked right now. Wait a moment, then try again.")
		return oauthserver.Pending
	}
	ok := p.matches(r.PostForm.Get("passphrase"))
	// The check leaves 19 MiB of garbage; collecting it before the slot
	// is free lets the next check reuse those pages, so the process peaks
	// near MaxChecks checks instead of growing to its memory limit.
	runtime.GC()
	p.gate.Leave()
	if !ok {
		p.refused(RefusedWrongPassphrase)
		p.attempts.settle(key, checkWrong)
		p.form(w, r, req, http.StatusUnauthorized, "Wrong passphrase.")
		return oauthserver.Pending
	}
	p.attempts.settle(key, checkRight)
	return oauthserver.Approved
}

// lockedOut answers an address that has used up its failures.
func (p *Page) lockedOut(w http.ResponseWriter) {
	p.refused(RefusedLockedOut)
	w.Header().Set("Retry-After", strconv.Itoa(int(p.cfg.Lockout/time.Second)))
	p.message(w, http.StatusTooManyRequests, "Too many wrong passphrases from your address. Try again later.")
}
