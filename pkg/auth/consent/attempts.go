package consent

import (
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// attempts counts the passphrase checks of each client address for the
// lockout. A check is reserved before it runs, so concurrent posts from
// one address run at most max checks before the lockout; a wrong
// passphrase turns its reservation into a failure, the right one clears
// the failures, and a check that did not run gives its reservation back.
// Failures are forgotten lockout after the latest; at most maxAddrs
// addresses are remembered, and when that many are live new addresses are
// refused (closed) until some expire.
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

// locked reports whether addr has used up its failures.
func (a *attempts) locked(addr string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.m[addr]
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

// reserve counts a check for addr before it runs.
func (a *attempts) reserve(addr string) reservation {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	e := a.m[addr]
	if e == nil {
		if len(a.m) >= a.maxAddrs {
			a.prune(now)
		}
		if len(a.m) >= a.maxAddrs {
			return tableIsFull
		}
		e = &attempt{}
		a.m[addr] = e
	}
	a.expire(e, now)
	if e.failed+e.pending >= a.max {
		return spent
	}
	e.pending++
	return reserved
}

// settle ends a reservation of addr.
func (a *attempts) settle(addr string, o outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.m[addr]
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
		delete(a.m, addr)
	}
}

// prune drops the addresses with nothing in flight and no failure left
// to remember. The caller holds mu.
func (a *attempts) prune(now time.Time) {
	for addr, e := range a.m {
		a.expire(e, now)
		if e.failed == 0 && e.pending == 0 {
			delete(a.m, addr)
		}
	}
}

// checkPassphrase runs the argon2id check of a posted approval. The
// attempt is reserved first: an address with no failure left, or one the
// full address table cannot hold, gets 429 and no check. Then a slot of
// the global gate is awaited; none in time gives 429 with Retry-After,
// the form again and the reservation back.
func (p *Page) checkPassphrase(w http.ResponseWriter, r *http.Request, req oauthserver.ConsentRequest, addr string) oauthserver.Decision {
	switch p.attempts.reserve(addr) {
	case spent:
		p.lockedOut(w)
		return oauthserver.Pending
	case tableIsFull:
		w.Header().Set("Retry-After", strconv.Itoa(int(p.cfg.Lockout/time.Second)))
		p.message(w, http.StatusTooManyRequests, "Too many addresses have tried passphrases recently. Try again later.")
		return oauthserver.Pending
	}
	if err := p.gate.Enter(r.Context()); err != nil {
		p.attempts.settle(addr, checkNotRun)
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
		p.attempts.settle(addr, checkWrong)
		p.form(w, r, req, http.StatusUnauthorized, "Wrong passphrase.")
		return oauthserver.Pending
	}
	p.attempts.settle(addr, checkRight)
	return oauthserver.Approved
}

// lockedOut answers an address that has used up its failures.
func (p *Page) lockedOut(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(p.cfg.Lockout/time.Second)))
	p.message(w, http.StatusTooManyRequests, "Too many wrong passphrases from your address. Try again later.")
}
