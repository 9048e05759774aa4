package oauthserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.5":             "203.0.113.5",
		"2001:db8:1:2::1":         "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:1:2:3": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":         "2001:db8:1:3::/64",
		"fe80::1%eth0":            "fe80::/64",
		"::ffff:203.0.113.5":      "::ffff:203.0.113.5",
		"invalid-forwarded-for":   "invalid-forwarded-for",
	} {
		if got := ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRateLimitCoversTheSlash64: addresses of one IPv6 /64 share one rate
// limit.
func TestRateLimitCoversTheSlash64(t *testing.T) {
	h, err := limited("3-M", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if err != nil {
		t.Fatal(err)
	}
	code := func(peer string) int {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "[" + peer + "]:1"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i := 1; i <= 3; i++ {
		if c := code(fmt.Sprintf("2001:db8:1:2::%x", i)); c != http.StatusOK {
			t.Fatalf("request %d: %d", i, c)
		}
	}
	if c := code("2001:db8:1:2::99"); c != http.StatusTooManyRequests {
		t.Fatalf("a fourth address of the /64: %d, want 429", c)
	}
	if c := code("2001:db8:1:3::1"); c != http.StatusOK {
		t.Fatalf("another /64: %d", c)
	}
}

// TestAddrLimiterIsBounded: past its maximum of keys a limiter counts new
// keys together, keeps the keys it tracks, and makes room as windows end.
func TestAddrLimiterIsBounded(t *testing.T) {
	l, err := NewAddrLimiter("1000-M", 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	for _, c := range []struct{ key, want string }{
		{"a", "a"}, {"b", "b"}, {"c", overflowKey}, {"a", "a"},
	} {
		if got := l.track(c.key); got != c.want {
			t.Fatalf("track(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	now = now.Add(time.Minute)
	if got := l.track("c"); got != "c" || len(l.keys) != 1 {
		t.Fatalf("after the window: track(c) = %q with %d keys, want c alone", got, len(l.keys))
	}
}
