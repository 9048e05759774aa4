package oauthserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func mustProxies(t *testing.T, list string) TrustedProxies {
	t.Helper()
	tp, err := ParseTrustedProxies(list)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestTrustedProxiesClientAddr: X-Forwarded-For is believed only from a
// configured proxy, and then its right-most entry that is not a proxy.
func TestTrustedProxiesClientAddr(t *testing.T) {
	tp := mustProxies(t, "127.0.0.0/8, ::1, 10.9.0.0/16")
	cases := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"untrusted public peer", "203.0.113.5:1234", []string{"198.51.100.1"}, "203.0.113.5"},
		{"untrusted private peer", "172.18.0.2:1234", []string{"198.51.100.1"}, "172.18.0.2"},
		{"loopback proxy", "127.0.0.1:1234", []string{"198.51.100.1"}, "198.51.100.1"},
		{"IPv6 loopback proxy", "[::1]:1234", []string{"198.51.100.1"}, "198.51.100.1"},
		{"client claims left of the proxy's entry", "127.0.0.1:1234", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"chain of proxies", "127.0.0.1:1234", []string{"6.6.6.6, 198.51.100.1, 10.9.1.1"}, "198.51.100.1"},
		{"header repeated", "10.9.0.3:1234", []string{"6.6.6.6", "198.51.100.1"}, "198.51.100.1"},
		{"only proxies", "127.0.0.1:1234", []string{"10.9.1.1"}, "10.9.1.1"},
		{"no header", "127.0.0.1:1234", nil, "127.0.0.1"},
		{"junk", "127.0.0.1:1234", []string{"junk"}, invalidForwardedFor},
		{"junk right of a proxy", "127.0.0.1:1234", []string{"198.51.100.1, junk, 10.9.1.1"}, invalidForwardedFor},
		{"zone", "127.0.0.1:1234", []string{"2001:db8::1%eth0"}, "2001:db8::1"},
		{"junk left of the client", "127.0.0.1:1234", []string{"junk, 198.51.100.1"}, "198.51.100.1"},
		{"mapped entry", "127.0.0.1:1234", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got, ok := tp.ClientAddr(r); got != c.want || ok != (c.want != invalidForwardedFor) {
			t.Errorf("%s: %s %v, want %s", c.name, got, ok, c.want)
		}
	}
	mapped := mustProxies(t, "::ffff:172.31.253.2/128, ::ffff:10.1.0.0/112")
	for _, peer := range []string{"172.31.253.2:1", "[::ffff:172.31.253.2]:1", "10.1.2.3:1"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", "198.51.100.1")
		if got, _ := mapped.ClientAddr(r); got != "198.51.100.1" {
			t.Errorf("IPv4-mapped trusted proxy, peer %s: client %s, want the forwarded one", peer, got)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "bridge", "10.0.0.1-10.0.0.9", "::ffff:0:0/95"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}

// registerVia posts a registration with extra headers.
func (a *asTest) registerVia(host string, headers map[string]string) (int, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+RegisterPath,
		strings.NewReader(`{"redirect_uris":["`+testRedirect+`"],"token_endpoint_auth_method":"none"}`))
	req.Header.Set("Content-Type", "application/json")
	if host != "" {
		req.Host = host
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, out := a.do(req)
	return resp.StatusCode, out
}

// TestForwardedForFromUntrustedPeer: a peer that is not a configured proxy
// cannot choose its rate-limit key with X-Forwarded-For; a trusted one
// (loopback by default) can name the client.
func TestForwardedForFromUntrustedPeer(t *testing.T) {
	untrusted := newASTestWith(t, "", Config{RegisterRate: "1-M", TokenRate: "1000-M", AuthorizeRate: "1000-M",
		TrustedProxies: mustProxies(t, "192.0.2.1/32")})
	if st, out := untrusted.registerVia("", map[string]string{"X-Forwarded-For": "198.51.100.1"}); st != http.StatusCreated {
		t.Fatalf("first registration: %d %v", st, out)
	}
	st, out := untrusted.registerVia("", map[string]string{"X-Forwarded-For": "198.51.100.2"})
	if st != http.StatusTooManyRequests || out["error"] != "slow_down" {
		t.Fatalf("a new X-Forwarded-For from an untrusted peer got a new key: %d %v", st, out)
	}
	if n := untrusted.counts()[0]; n != 1 {
		t.Fatalf("%d clients stored, want 1", n)
	}

	trusted := newASTestWith(t, "", Config{RegisterRate: "1-M", TokenRate: "1000-M", AuthorizeRate: "1000-M"})
	for _, xff := range []string{"198.51.100.1", "198.51.100.2"} {
		if st, out := trusted.registerVia("", map[string]string{"X-Forwarded-For": xff}); st != http.StatusCreated {
			t.Fatalf("behind the loopback proxy, client %s: %d %v", xff, st, out)
		}
	}
	if st, out := trusted.registerVia("", map[string]string{"X-Forwarded-For": "6.6.6.6, 198.51.100.2"}); st != http.StatusTooManyRequests || out["error"] != "slow_down" {
		t.Fatalf("a claim left of the proxy's entry changed the key: %d %v", st, out)
	}
	if n := trusted.counts()[0]; n != 2 {
		t.Fatalf("%d clients stored, want 2", n)
	}
}

// TestForeignHostRefused: a request addressed to another host (Host, or
// X-Forwarded-Host from a trusted proxy) is refused with 421 before any
// endpoint runs: nothing is registered, no consent is asked.
func TestForeignHostRefused(t *testing.T) {
	a := newASTestWith(t, "", Config{RegisterRate: "1000-M", TokenRate: "1000-M", AuthorizeRate: "1000-M",
		InternalHosts: []string{"bridge:8765"}})
	refused := []struct {
		name, host string
		headers    map[string]string
	}{
		{"foreign Host", "evil.example", nil},
		{"foreign Host with our port", "evil.example:443", nil},
		{"lookalike of the issuer", "notes.example.com.evil.example", nil},
		{"internal name on another port", "bridge:9999", nil},
		{"IPv6 literal that is not loopback", "[2001:db8::1]:443", nil},
		{"foreign forwarded host from the proxy", "", map[string]string{"X-Forwarded-Host": "evil.example"}},
		{"two forwarded hosts", "", map[string]string{"X-Forwarded-Host": "notes.example.com, evil.example"}},
	}
	for _, c := range refused {
		st, out := a.registerVia(c.host, c.headers)
		if st != http.StatusMisdirectedRequest || out["error"] != "invalid_request" {
			t.Errorf("%s: %d %v", c.name, st, out)
		}
	}
	if n := a.counts()[0]; n != 0 {
		t.Fatalf("%d clients registered for foreign hosts", n)
	}
	for _, path := range []string{MetadataPath, AuthorizePath + "?client_id=x", TokenPath} {
		req, _ := http.NewRequest(http.MethodGet, a.srv.URL+path, nil)
		req.Host = "evil.example"
		if resp, out := a.do(req); resp.StatusCode != http.StatusMisdirectedRequest || out["error"] != "invalid_request" {
			t.Errorf("%s for evil.example: %d %v", path, resp.StatusCode, out)
		}
	}
	if len(a.consent.asked) != 0 {
		t.Fatal("consent was asked for a foreign host")
	}
	for _, host := range []string{"notes.example.com", "NOTES.example.com:443", "notes.example.com.:18443", "bridge:8765", "localhost:8765", "[::1]:1", ""} {
		headers := map[string]string{}
		if host == "" { // the proxy names our host
			headers["X-Forwarded-Host"] = "notes.example.com"
		}
		if st, out := a.registerVia(host, headers); st != http.StatusCreated {
			t.Errorf("host %q: %d %v", host, st, out)
		}
	}
}

// TestForwardedHostFromUntrustedPeer: an untrusted peer's X-Forwarded-Host
// is not believed, in either direction.
func TestForwardedHostFromUntrustedPeer(t *testing.T) {
	a := newASTestWith(t, "", Config{RegisterRate: "1000-M", TokenRate: "1000-M", AuthorizeRate: "1000-M",
		TrustedProxies: mustProxies(t, "192.0.2.1/32")})
	if st, out := a.registerVia("evil.example", map[string]string{"X-Forwarded-Host": "notes.example.com"}); st != http.StatusMisdirectedRequest {
		t.Fatalf("a forged forwarded host passed: %d %v", st, out)
	}
	if n := a.counts()[0]; n != 0 {
		t.Fatalf("%d clients registered", n)
	}
	if st, out := a.registerVia("notes.example.com", map[string]string{"X-Forwarded-Host": "evil.example"}); st != http.StatusCreated {
		t.Fatalf("an ignored forwarded host refused the request: %d %v", st, out)
	}
}

// TestFrontChecksPeerAndForwardedFor: a loopback Host is ours only from a
// loopback peer, and a trusted proxy's unreadable X-Forwarded-For is
// refused instead of keying the request by the proxy's address.
func TestFrontChecksPeerAndForwardedFor(t *testing.T) {
	a := newASTestWith(t, "", Config{RegisterRate: "1000-M", TokenRate: "1000-M", AuthorizeRate: "1000-M",
		TrustedProxies: mustProxies(t, "127.0.0.0/8, ::1, 172.31.253.2")})
	h := a.as.Routes()[RegisterPath]
	send := func(peer, host, xff string) int {
		r := httptest.NewRequest(http.MethodPost, RegisterPath,
			strings.NewReader(`{"redirect_uris":["`+testRedirect+`"],"token_endpoint_auth_method":"none"}`))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr, r.Host = peer, host
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, host := range []string{"localhost", "127.0.0.1:8765", "[::1]", "[::ffff:127.0.0.1]:80"} {
		if c := send("172.31.253.200:4444", host, ""); c != http.StatusMisdirectedRequest {
			t.Errorf("Host %q from a remote peer: %d, want 421", host, c)
		}
		if c := send("127.0.0.1:4444", host, ""); c != http.StatusCreated {
			t.Errorf("Host %q from a loopback peer: %d, want 201", host, c)
		}
	}
	for _, xff := range []string{"bogus", "198.51.100.1, bogus", "bogus, 172.31.253.2"} {
		if c := send("172.31.253.2:4444", "notes.example.com", xff); c != http.StatusBadRequest {
			t.Errorf("X-Forwarded-For %q from the proxy: %d, want 400", xff, c)
		}
	}
	if c := send("172.31.253.2:4444", "notes.example.com", "198.51.100.1"); c != http.StatusCreated {
		t.Errorf("a readable X-Forwarded-For from the proxy: %d, want 201", c)
	}
}
