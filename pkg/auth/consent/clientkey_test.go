package consent

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// TestNonceFloodKeepsTheOwnersForm: forms loaded from thousands of
// addresses of one IPv6 /64, or from more IPv4 addresses than MaxNonces,
// never evict the owner's form: a key's own oldest goes past
// MaxNoncesPerKey, and past MaxNonces no new form is issued.
func TestNonceFloodKeepsTheOwnersForm(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	n := newNonces(10*time.Minute, 64, 4, func() time.Time { return now })
	const owner = "203.0.113.5"
	mine, ok := n.issue(owner, oauthserver.ClientKey(owner), offerDigest{})
	if !ok {
		t.Fatal("no form for the owner")
	}
	for i := 1; i <= 4096; i++ {
		a := fmt.Sprintf("2001:db8:1:2::%x", i)
		if _, ok := n.issue(a, oauthserver.ClientKey(a), offerDigest{}); !ok {
			t.Fatalf("form %d from one /64 refused: that key's own oldest should go", i)
		}
	}
	refused := 0
	for i := range 200 {
		a := fmt.Sprintf("198.51.%d.%d", i/250, i%250+1)
		if _, ok := n.issue(a, a, offerDigest{}); !ok {
			refused++
		}
	}
	if refused == 0 {
		t.Error("more forms than MaxNonces were issued")
	}
	if got, _ := n.consume(mine, owner); got != nonceOK {
		t.Fatalf("the owner's form after the flood: %v, want nonceOK", got)
	}
}

// TestFullAddressTableAdmitsANewKey: when every remembered key has failed,
// a key that has not replaces the one with the fewest failures instead of
// being refused.
func TestFullAddressTableAdmitsANewKey(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a := newAttempts(5, 15*time.Minute, 100, func() time.Time { return now })
	for i := range 100 {
		k := fmt.Sprintf("2001:db8:%x::/64", i)
		fails := 1 + i%5
		for range fails {
			if a.reserve(k) != reserved {
				t.Fatalf("key %d: no reservation", i)
			}
			a.settle(k, checkWrong)
		}
	}
	if got := a.reserve("203.0.113.5"); got != reserved {
		t.Fatalf("a new key with the table full: %v, want reserved", got)
	}
	a.settle("203.0.113.5", checkRight)
	if !a.locked("2001:db8:4::/64") {
		t.Fatal("a locked-out key was forgotten before one with fewer failures")
	}
}

// TestLockoutCoversTheSlash64: wrong passphrases from five addresses of
// one IPv6 /64 lock out the whole /64, not each address; another /64 is
// not affected.
func TestLockoutCoversTheSlash64(t *testing.T) {
	ct := newConsentTest(t, "1000-M", `"Client"`)
	ct.page.matches = func(p string) bool { return p == passphrase }
	q := ct.query()
	for i := 1; i <= 5; i++ {
		a := fmt.Sprintf("2001:db8:1:2::%x", i)
		_, _, c, csrf := ct.showFrom(a, q)
		if resp, _ := ct.submitFrom(a, q, c, approve(csrf, "wrong")); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong passphrase %d: %d", i, resp.StatusCode)
		}
	}
	if resp, body, _, _ := ct.showFrom("2001:db8:1:2::99", q); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "Too many wrong passphrases") {
		t.Fatalf("a sixth address of the /64: %d, want the lockout", resp.StatusCode)
	}
	const other = "2001:db8:1:3::1"
	_, _, c, csrf := ct.showFrom(other, q)
	if resp, _ := ct.submitFrom(other, q, c, approve(csrf, passphrase)); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("another /64: %d, want the approval", resp.StatusCode)
	}
}
