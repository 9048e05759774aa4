package consent

import (
	"crypto/rand"
	"encoding/base64"
	"slices"
	"sync"
	"time"
)

// nonces are the consent forms handed out, each with a digest of the
// notebook boxes its page offered (offer.go). A form's cookie nonce is valid
// once (the first post that denies or checks a passphrase consumes it),
// for a limited time, and only from the client address that loaded the
// page. Each client key (oauthserver.ClientKey) holds at most perKey live
// nonces: a new form past that drops the key's own oldest, never another
// key's. At most max are live in all: past that no form is issued until
// some expire, so the memory they take is bounded whatever the callers do
// and a flood never evicts the owner's form.
type nonces struct {
	mu     sync.Mutex
	ttl    time.Duration
	max    int
	perKey int
	now    func() time.Time
	live   map[string]nonce
	byKey  map[string][]string // each key's live nonces, oldest first
	order  []string            // issue order, which is expiry order; may hold consumed nonces
}

type nonce struct {
	addr, key string
	expires   time.Time
	offered   offerDigest
}

// nonceResult is why a posted nonce was accepted or refused.
type nonceResult int

const (
	nonceOK        nonceResult = iota
	nonceGone                  // never issued, expired, evicted or already used
	nonceElsewhere             // issued to another client address
)

func newNonces(ttl time.Duration, max, perKey int, now func() time.Time) *nonces {
	return &nonces{ttl: ttl, max: max, perKey: perKey, now: now, live: map[string]nonce{}, byKey: map[string][]string{}}
}

// issue returns a new nonce for a form shown to addr, whose client key is
// key, offering the boxes offered digests; ok is false when max nonces
// are live.
func (n *nonces) issue(addr, key string, offered offerDigest) (v string, ok bool) {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	v = base64.RawURLEncoding.EncodeToString(b)
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	for len(n.order) > 0 {
		rec, live := n.live[n.order[0]]
		if live && now.Before(rec.expires) {
			break
		}
		if live {
			n.drop(n.order[0], rec.key)
		}
		n.order = n.order[1:]
	}
	if mine := n.byKey[key]; len(mine) >= n.perKey {
		n.drop(mine[0], key)
	}
	if len(n.live) >= n.max {
		return "", false
	}
	if len(n.order) > 2*len(n.live)+64 {
		n.order = slices.DeleteFunc(n.order, func(o string) bool { _, live := n.live[o]; return !live })
	}
	n.live[v] = nonce{addr: addr, key: key, expires: now.Add(n.ttl), offered: offered}
	n.byKey[key] = append(n.byKey[key], v)
	n.order = append(n.order, v)
	return v, true
}

// drop forgets the live nonce v of key. The caller holds mu.
func (n *nonces) drop(v, key string) {
	delete(n.live, v)
	mine := slices.DeleteFunc(n.byKey[key], func(o string) bool { return o == v })
	if len(mine) == 0 {
		delete(n.byKey, key)
	} else {
		n.byKey[key] = mine
	}
}

// consume uses up v when it is live and was issued to addr, and returns
// the digest of what its page offered. A nonce posted from another
// address stays usable by the address it was issued to.
func (n *nonces) consume(v, addr string) (nonceResult, offerDigest) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rec, ok := n.live[v]
	switch {
	case !ok:
		return nonceGone, offerDigest{}
	case !n.now().Before(rec.expires):
		n.drop(v, rec.key)
		return nonceGone, offerDigest{}
	case rec.addr != addr:
		return nonceElsewhere, offerDigest{}
	}
	n.drop(v, rec.key)
	return nonceOK, rec.offered
}
