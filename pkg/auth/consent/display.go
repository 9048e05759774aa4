package consent

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// What the page says about a client is what the client said at
// registration, so it is presented for what it is: the redirect host's
// registrable domain (where the owner is really sent) first, and the
// client's name as its own, unverified claim.

// describeRedirect returns the site (the registrable domain of the
// redirect host, by the public suffix list; an IP address, localhost or a
// host that is itself a public suffix stands for itself) and the full
// host (with the port, when there is one) of a redirect URI, both ASCII
// and lower case. Registration admits only ASCII hosts; a host stored
// before that rule is shown in punycode, or escaped.
func describeRedirect(raw string) (site, host string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "an unknown address", "an unknown address"
	}
	name := asciiHost(strings.ToLower(u.Hostname()))
	site, host = name, name
	if net.ParseIP(name) == nil {
		if d, err := publicsuffix.EffectiveTLDPlusOne(name); err == nil {
			site = d
		}
	}
	if port := u.Port(); port != "" {
		host = net.JoinHostPort(name, port)
	}
	return site, host
}

// asciiHost returns host in ASCII: as it is, in punycode, or quoted with
// escapes when it is not a valid internationalised name.
func asciiHost(host string) string {
	if !strings.ContainsFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return host
	}
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		return a
	}
	return strconv.QuoteToASCII(host)
}

// displayName returns a client's name as the page shows it: as it is when
// registration would accept it, else quoted with escapes (a name stored
// before the rule), so no mixed script or invisible character reaches the
// owner unmarked.
func displayName(name string) string {
	if oauthserver.CheckClientName(name) == nil {
		return name
	}
	return strconv.QuoteToASCII(name)
}
