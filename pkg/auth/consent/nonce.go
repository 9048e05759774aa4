package consent

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// nonces are the consent forms handed out. A form's cookie nonce is valid
// once (the first post that denies or checks a passphrase consumes it),
// for a limited time, and only from the client address that loaded the
// page. At most max are kept: issuing past the bound drops the oldest, so
// the memory they take is bounded whatever the callers do.
type nonces struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	now   func() time.Time
	live  map[string]nonce
	order []string // issue order, which is expiry order; may hold consumed nonces
}

type nonce struct {
	addr    string
	expires time.Time
}

// nonceResult is why a posted nonce was accepted or refused.
type nonceResult int

const (
	nonceOK        nonceResult = iota
	nonceGone                  // never issued, expired, evicted or already used
	nonceElsewhere             // issued to another client address
)

func newNonces(ttl time.Duration, max int, now func() time.Time) *nonces {
	return &nonces{ttl: ttl, max: max, now: now, live: map[string]nonce{}}
}

// issue returns a new nonce for a form shown to addr.
func (n *nonces) issue(addr string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	for len(n.order) > 0 {
		first := n.order[0]
		rec, ok := n.live[first]
		if ok && now.Before(rec.expires) && len(n.order) < n.max {
			break
		}
		delete(n.live, first)
		n.order = n.order[1:]
	}
	n.live[v] = nonce{addr: addr, expires: now.Add(n.ttl)}
	n.order = append(n.order, v)
	return v
}

// consume uses up v when it is live and was issued to addr. A nonce
// posted from another address stays usable by the address it was issued to.
func (n *nonces) consume(v, addr string) nonceResult {
	n.mu.Lock()
	defer n.mu.Unlock()
	rec, ok := n.live[v]
	switch {
	case !ok:
		return nonceGone
	case !n.now().Before(rec.expires):
		delete(n.live, v)
		return nonceGone
	case rec.addr != addr:
		return nonceElsewhere
	}
	delete(n.live, v)
	return nonceOK
}
