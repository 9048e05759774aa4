package joplin

import (
	"math"
	"sync"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// breaker remembers that Joplin is down, so that calls queued behind one
// another (creates under the create lock, a burst of reads) do not each
// spend the whole availability wait finding it out again. It opens when a
// call's wait runs out with Joplin unreachable. While it is open, one call
// at a time is the probe: it tries Joplin once, without waiting; every
// other call fails at once with JOPLIN_UNAVAILABLE. Any answer from Joplin
// (a success or an HTTP error) closes it.
type breaker struct {
	mu      sync.Mutex
	open    bool
	probing bool
	// retryAfter is the hint the refusal gives, in seconds.
	retryAfter int
}

func newBreaker(cfg Config) *breaker {
	return &breaker{retryAfter: max(1, int(math.Ceil(cfg.AvailabilityWait.Seconds())))}
}

// enter admits a call. probe reports that the breaker is open and this
// call is its one try; it must then call leave. A refusal is the call's
// error.
func (b *breaker) enter() (probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return false, nil
	}
	if b.probing {
		return false, b.refusal()
	}
	b.probing = true
	return true, nil
}

// leave ends a probe.
func (b *breaker) leave() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// answered records that Joplin answered: the breaker closes.
func (b *breaker) answered() {
	b.mu.Lock()
	b.open = false
	b.mu.Unlock()
}

// down records that a call found Joplin unreachable for its whole wait
// (or, as the probe, at its one try): the breaker opens.
func (b *breaker) down() {
	b.mu.Lock()
	b.open = true
	b.mu.Unlock()
}

func (b *breaker) refusal() error {
	return domainerr.Retryable(domainerr.JoplinUnavailable,
		"Joplin is not reachable (the bridge's last try found it down); retry in about %d s", b.retryAfter).
		WithDetails(map[string]any{"retry_after_seconds": b.retryAfter})
}
