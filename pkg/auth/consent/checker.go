package consent

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"strconv"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// Checker is the owner passphrase check every page that asks for it
// shares (the consent page, the owner's console): a rate limit per client
// key, the lockout after repeated wrong passphrases, and the process-wide
// bound on argon2id checks running at once. Pages built on one Checker
// share its lockout, so an address cannot double its guesses by
// switching pages.
type Checker struct {
	lim      *oauthserver.AddrLimiter
	attempts *attempts
	gate     *oauthserver.Gate
	lockout  time.Duration
	// matches checks a passphrase (the hash's Matches; tests count).
	matches func(string) bool
	// refused is told of every wrong passphrase and locked-out attempt.
	refused func(reason string)
}

// NewChecker builds the checker of cfg's hash, rate, lockout and check
// bounds (the defaults of Config).
func NewChecker(cfg Config) (*Checker, error) {
	if len(cfg.Hash.key) == 0 {
		return nil, errors.New("owner passphrase: the hash is required")
	}
	lim, err := oauthserver.NewAddrLimiter(cmp.Or(cfg.Rate, "30-M"), 0)
	if err != nil {
		return nil, err
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 5
	}
	if cfg.Lockout <= 0 {
		cfg.Lockout = 15 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Checker{lim: lim, lockout: cfg.Lockout,
		attempts: newAttempts(cfg.MaxFailures, cfg.Lockout, cmp.Or(cfg.MaxAddresses, 10000), cfg.Now),
		gate:     oauthserver.NewGate(cmp.Or(cfg.MaxChecks, 2), cmp.Or(cfg.CheckWait, 2*time.Second)),
		matches:  cfg.Hash.Matches, refused: cfg.Refused}, nil
}

// Verdict is what the checker decided about a request or a passphrase.
type Verdict int

// The verdicts. Every verdict but Admitted and Right comes with a
// Retry-After (RetryAfter).
const (
	Admitted  Verdict = iota // the address may go on (Admit)
	Right                    // the passphrase is the owner's (Check)
	Wrong                    // the passphrase is not
	Limited                  // too many requests from the address
	LockedOut                // too many wrong passphrases from the address
	Crowded                  // too many addresses are failing; no room to count another
	Busy                     // no check slot came free in time
)

// Message is what a page tells the owner about v.
func (v Verdict) Message() string {
	switch v {
	case Wrong:
		return "Wrong passphrase."
	case Limited:
		return "Too many requests from your address. Wait a minute and reload the page."
	case LockedOut:
		return "Too many wrong passphrases from your address. Try again later."
	case Crowded:
		return "Too many addresses have tried passphrases recently. Try again later."
	case Busy:
		return "Many passphrases are being checked right now. Wait a moment, then try again."
	}
	return ""
}

// RetryAfter is the Retry-After header value for v, in seconds ("" for
// none).
func (c *Checker) RetryAfter(v Verdict) string {
	switch v {
	case LockedOut, Crowded:
		return strconv.Itoa(int(c.lockout / time.Second))
	case Busy:
		return strconv.Itoa(c.gate.RetryAfter())
	}
	return ""
}

// Admit counts a request of addr (an oauthserver.ClientAddr) against the
// rate limit and tells whether the address is locked out.
func (c *Checker) Admit(ctx context.Context, addr string) Verdict {
	if !c.lim.Allow(ctx, addr) {
		return Limited
	}
	if c.attempts.locked(oauthserver.ClientKey(addr)) {
		c.refuse(RefusedLockedOut)
		return LockedOut
	}
	return Admitted
}

// Check runs the argon2id check of passphrase for addr. The attempt is
// reserved first: an address with no failure left gets LockedOut, one the
// full address table cannot hold Crowded, and no check runs. Then a slot
// of the global gate is awaited; none in time gives Busy and the
// reservation back.
func (c *Checker) Check(ctx context.Context, addr, passphrase string) Verdict {
	key := oauthserver.ClientKey(addr)
	switch c.attempts.reserve(key) {
	case spent:
		c.refuse(RefusedLockedOut)
		return LockedOut
	case tableIsFull:
		return Crowded
	}
	if err := c.gate.Enter(ctx); err != nil {
		c.attempts.settle(key, checkNotRun)
		return Busy
	}
	ok := c.matches(passphrase)
	// The check leaves 19 MiB of garbage; collecting it before the slot
	// is free lets the next check reuse those pages, so the process peaks
	// near MaxChecks checks instead of growing to its memory limit.
	runtime.GC()
	c.gate.Leave()
	if !ok {
		c.attempts.settle(key, checkWrong)
		c.refuse(RefusedWrongPassphrase)
		return Wrong
	}
	c.attempts.settle(key, checkRight)
	return Right
}
