package oauthserver

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// ClientKey is the key of a client address in every per-address defence
// (rate limits, the passphrase lockout, the table of failures): an IPv4
// address as it is, an IPv6 address as its /64, the block one subscriber
// or host is usually given whole, so rotating addresses within it gains
// nothing. A value that is not an address is its own key.
func ClientKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Unmap().Is4() {
		return addr
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}

// overflowKey is the shared key of the clients that arrive while an
// AddrLimiter already tracks its maximum of keys.
const overflowKey = "overflow"

// AddrLimiter bounds the requests of each client key (ClientKey) per rate.
// At most max keys are tracked per window (ulule's memory store has no
// size bound, so the limiter keeps its own): a key that arrives while max
// live keys are tracked shares one overflow count with every other such
// key until windows expire, so memory stays bounded and clients already
// tracked keep their own count.
type AddrLimiter struct {
	lim  *limiter.Limiter
	rate limiter.Rate
	max  int
	now  func() time.Time

	mu    sync.Mutex
	keys  map[string]time.Time // key -> end of its window
	order []string             // keys in arrival order, which is expiry order
}

// DefaultMaxLimiterKeys is the number of client keys an AddrLimiter tracks.
const DefaultMaxLimiterKeys = 8192

// NewAddrLimiter returns a limiter of rate (ulule format, e.g. "20-M")
// tracking at most max keys (DefaultMaxLimiterKeys when max <= 0).
func NewAddrLimiter(rate string, max int) (*AddrLimiter, error) {
	r, err := limiter.NewRateFromFormatted(rate)
	if err != nil {
		return nil, err
	}
	if max <= 0 {
		max = DefaultMaxLimiterKeys
	}
	return &AddrLimiter{lim: limiter.New(memory.NewStore(), r), rate: r, max: max, now: time.Now,
		keys: map[string]time.Time{}}, nil
}

// Allow counts a request of the client at addr and reports whether it is
// within the rate. It fails closed: a store error counts as over the rate.
func (l *AddrLimiter) Allow(ctx context.Context, addr string) bool {
	lc, err := l.lim.Get(ctx, l.track(ClientKey(addr)))
	return err == nil && !lc.Reached
}

// track returns the key to count key under: itself when it is tracked or
// there is room, else overflowKey.
func (l *AddrLimiter) track(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for len(l.order) > 0 {
		first := l.order[0]
		if end, ok := l.keys[first]; ok && now.Before(end) {
			break
		}
		delete(l.keys, first)
		l.order = l.order[1:]
	}
	if _, ok := l.keys[key]; ok {
		return key
	}
	if len(l.keys) >= l.max {
		return overflowKey
	}
	l.keys[key] = now.Add(l.rate.Period)
	l.order = append(l.order, key)
	return key
}

// limited bounds the requests each client key may send to h, per rate
// (ulule format, e.g. "20-M"); beyond it the answer is 429 with
// Retry-After.
func limited(rate string, h http.Handler) (http.Handler, error) {
	l, err := NewAddrLimiter(rate, 0)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !l.Allow(req.Context(), ClientAddr(req)) {
			w.Header().Set("Retry-After", strconv.Itoa(int(l.rate.Period.Seconds())))
			writeJSONError(w, http.StatusTooManyRequests, "slow_down", "too many requests from this address; retry later")
			return
		}
		h.ServeHTTP(w, req)
	}), nil
}
