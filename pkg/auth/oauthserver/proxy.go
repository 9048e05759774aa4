package oauthserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// DefaultTrustedProxies are the peers believed by default: loopback only
// (a proxy on the same host). Another container on a private network is
// not a proxy unless configured.
const DefaultTrustedProxies = "127.0.0.0/8,::1/128"

// TrustedProxies is the set of peers whose X-Forwarded-For and
// X-Forwarded-Host headers are believed. The zero value trusts no peer.
type TrustedProxies struct {
	prefixes []netip.Prefix
}

// ParseTrustedProxies reads a comma-separated list of CIDR prefixes or
// single addresses.
func ParseTrustedProxies(list string) (TrustedProxies, error) {
	var t TrustedProxies
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil {
				return TrustedProxies{}, fmt.Errorf("trusted proxy %q is neither a CIDR prefix nor an address", item)
			}
			p = netip.PrefixFrom(a.WithZone(""), a.BitLen())
		}
		if p.Addr().Is4In6() {
			// Peers are matched unmapped, so a mapped prefix is its
			// IPv4 prefix; one wider than ::ffff:0:0/96 is ambiguous.
			if p.Bits() < 96 {
				return TrustedProxies{}, fmt.Errorf("trusted proxy %q: an IPv4-mapped prefix must be /96 or narrower; give the IPv4 prefix instead", item)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		t.prefixes = append(t.prefixes, p.Masked())
	}
	return t, nil
}

// defaultTrusted is DefaultTrustedProxies, parsed.
var defaultTrusted, _ = ParseTrustedProxies(DefaultTrustedProxies)

// trusts reports whether a is a trusted proxy's address.
func (t TrustedProxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peer is the address of the connection's other end.
func peer(r *http.Request) (netip.Addr, string) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, host
	}
	return a.Unmap(), a.Unmap().String()
}

// invalidForwardedFor is the client address of a request whose
// X-Forwarded-For cannot be read where it matters (see ClientAddr): Front
// refuses such a request; elsewhere they share this key, which no
// well-formed request has.
const invalidForwardedFor = "invalid-forwarded-for"

// ClientAddr is the caller's IP, the address behind its rate-limit and
// lockout key (ClientKey): the peer's address, unless the peer is a
// trusted proxy; then the right-most X-Forwarded-For entry that is not
// itself a trusted proxy (each proxy appends the address it saw, so
// entries left of it are the client's claims). ok is false when the walk
// meets a malformed entry before the client's: the client is unknown, and
// the proxy's own address must not stand in for it.
func (t TrustedProxies) ClientAddr(r *http.Request) (addr string, ok bool) {
	a, s := peer(r)
	if !a.IsValid() || !t.trusts(a) {
		return s, true
	}
	var entries []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		entries = append(entries, strings.Split(v, ",")...)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e, err := netip.ParseAddr(strings.TrimSpace(entries[i]))
		if err != nil {
			return invalidForwardedFor, false
		}
		s = e.Unmap().WithZone("").String()
		if !t.trusts(e) {
			return s, true
		}
	}
	return s, true
}

// requestHost is the host a request was sent to: X-Forwarded-Host when a
// trusted proxy set it, else Host. ok is false when a trusted proxy sent
// more than one forwarded host.
func (t TrustedProxies) requestHost(r *http.Request) (string, bool) {
	if a, _ := peer(r); a.IsValid() && t.trusts(a) {
		if v := r.Header.Values("X-Forwarded-Host"); len(v) > 0 {
			if len(v) > 1 || strings.Contains(v[0], ",") {
				return "", false
			}
			return strings.TrimSpace(v[0]), true
		}
	}
	return r.Host, true
}

type clientAddrKey struct{}

// ClientAddr is the client address the authorization server resolved for
// r (its trusted proxies applied). A request that did not pass through the
// server's front (tests of a consent step alone) gets the default: only a
// loopback peer's X-Forwarded-For is believed.
func ClientAddr(r *http.Request) string {
	if s, ok := r.Context().Value(clientAddrKey{}).(string); ok {
		return s
	}
	s, _ := defaultTrusted.ClientAddr(r)
	return s
}

// hostSet is what a request may be addressed to: the issuer's host name
// on any port (a proxy may publish it on another port, e.g. a test stack's
// 18443), the internal names a proxy dials (host:port exactly, or a bare
// name on any port), and loopback (any port) when the peer is loopback
// too, for local clients and tests: a remote peer cannot claim a local
// name.
type hostSet struct {
	public   string
	internal map[string]bool
}

func newHostSet(issuer string, internal []string) hostSet {
	hs := hostSet{internal: map[string]bool{}}
	if u, err := url.Parse(issuer); err == nil {
		hs.public = hostName(u.Host)
	}
	for _, h := range internal {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			hs.internal[h] = true
		}
	}
	return hs
}

// hostName is the lower-case name of a Host value, without port, brackets
// or trailing dot.
func hostName(host string) string {
	host = strings.ToLower(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.Trim(host, "[]"), ".")
}

// allows reports whether host is ours; fromLoopback is whether the peer
// is a loopback address.
func (hs hostSet) allows(host string, fromLoopback bool) bool {
	name := hostName(host)
	if name == "" {
		return false
	}
	if name == hs.public || hs.internal[strings.ToLower(host)] || hs.internal[name] {
		return true
	}
	if !fromLoopback {
		return false
	}
	if name == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(name)
	return err == nil && a.Unmap().IsLoopback()
}

// Front guards h, an endpoint of the authorization server or the resource
// metadata: a request addressed to another host than ours (the issuer's,
// an internal address the proxy dials, loopback from a loopback peer) is
// refused with 421, and the client address is resolved once, through the
// trusted proxies, for the rate limits, the lockout and the consent step
// (ClientAddr); a request whose client cannot be read from a trusted
// proxy's X-Forwarded-For is refused with 400.
func (s *Server) Front(h http.Handler) http.Handler {
	return front(s.hosts, s.cfg.TrustedProxies, h)
}

// NewFront is the server's Front for pages served beside it on the same
// public origin (the owner's console), also when OAuth is off: the same
// host check and client address, for issuer's host, the internal hosts a
// proxy dials, and loopback.
func NewFront(issuer string, proxies TrustedProxies, internalHosts []string) func(http.Handler) http.Handler {
	if len(proxies.prefixes) == 0 {
		proxies = defaultTrusted
	}
	hosts := newHostSet(issuer, internalHosts)
	return func(h http.Handler) http.Handler { return front(hosts, proxies, h) }
}

func front(hosts hostSet, proxies TrustedProxies, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, ok := proxies.requestHost(r)
		p, _ := peer(r)
		if !ok || !hosts.allows(host, p.IsValid() && p.IsLoopback()) {
			writeJSONError(w, http.StatusMisdirectedRequest, "invalid_request", "this server does not answer for that host")
			return
		}
		addr, ok := proxies.ClientAddr(r)
		if !ok {
			writeJSONError(w, http.StatusBadRequest, "invalid_request", "X-Forwarded-For holds an entry that is not an IP address")
			return
		}
		ctx := context.WithValue(r.Context(), clientAddrKey{}, addr)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
