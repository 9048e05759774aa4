package oauthserver

import (
	"context"
	"errors"
	"time"
)

// ErrBusy is returned by Gate.Enter when no slot freed up in time.
var ErrBusy = errors.New("too many credential checks are running; retry later")

// Gate bounds how many expensive credential checks (argon2id passphrase
// checks, bcrypt client secrets) run at once across the process. A caller
// beyond the bound waits at most the gate's wait, or until its context
// ends, and is then turned away, so a burst costs bounded memory and CPU
// and is answered 429 instead of queueing without end.
type Gate struct {
	slots chan struct{}
	wait  time.Duration
}

// NewGate returns a gate of n slots (at least 1) whose callers wait at
// most wait for one.
func NewGate(n int, wait time.Duration) *Gate {
	return &Gate{slots: make(chan struct{}, max(n, 1)), wait: wait}
}

// Enter takes a slot, waiting at most the gate's wait. It returns ErrBusy
// when the wait passed and the context's error when it ended first; on
// success the caller must call Leave.
func (g *Gate) Enter(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-t.C:
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leave frees the slot Enter took.
func (g *Gate) Leave() { <-g.slots }

// RetryAfter is the Retry-After value, in whole seconds, to send a caller
// Enter turned away: the gate's wait, at least one second.
func (g *Gate) RetryAfter() int {
	return max(int((g.wait+time.Second-1)/time.Second), 1)
}
