package oauthserver

import "net/netip"

// specialBlock is one entry of the IANA IPv4 or IPv6 Special-Purpose
// Address Registry (or a block outside them that is equally not public),
// with the RFC that defines it. Global is the registry's "Globally
// Reachable" column; "N/A" (deprecated blocks) counts as not global.
type specialBlock struct {
	Prefix netip.Prefix
	Name   string
	RFC    string
	Global bool
}

func block(prefix, name, rfc string, global bool) specialBlock {
	return specialBlock{Prefix: netip.MustParsePrefix(prefix), Name: name, RFC: rfc, Global: global}
}

// specialBlocks: the entries of the IANA IPv4 Special-Purpose Address
// Registry (iana-ipv4-special-registry) and IPv6 Special-Purpose Address
// Registry (iana-ipv6-special-registry) as of 2025, then the blocks that
// are not in those registries but are no more public.
var specialBlocks = []specialBlock{
	// IPv4 Special-Purpose Address Registry.
	block("0.0.0.0/8", "This network", "RFC 791 §3.2", false),
	block("0.0.0.0/32", "This host on this network", "RFC 1122 §3.2.1.3", false),
	block("10.0.0.0/8", "Private-Use", "RFC 1918", false),
	block("100.64.0.0/10", "Shared Address Space", "RFC 6598", false),
	block("127.0.0.0/8", "Loopback", "RFC 1122 §3.2.1.3", false),
	block("169.254.0.0/16", "Link Local", "RFC 3927", false),
	block("172.16.0.0/12", "Private-Use", "RFC 1918", false),
	block("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890 §2.1", false),
	block("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", false),
	block("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", false),
	block("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", true),
	block("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", true),
	block("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", false),
	block("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", false),
	block("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", false),
	block("192.31.196.0/24", "AS112-v4", "RFC 7535", true),
	block("192.52.193.0/24", "AMT", "RFC 7450", true),
	block("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", false),
	block("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", false),
	block("192.168.0.0/16", "Private-Use", "RFC 1918", false),
	block("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", true),
	block("198.18.0.0/15", "Benchmarking", "RFC 2544", false),
	block("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", false),
	block("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", false),
	block("240.0.0.0/4", "Reserved", "RFC 1112 §4", false),
	block("255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919 §7", false),

	// IPv6 Special-Purpose Address Registry.
	block("::1/128", "Loopback Address", "RFC 4291", false),
	block("::/128", "Unspecified Address", "RFC 4291", false),
	block("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", false),
	block("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", true),
	block("64:ff9b:1::/48", "IPv4-IPv6 Translat. (local use)", "RFC 8215", false),
	block("100::/64", "Discard-Only Address Block", "RFC 6666", false),
	block("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", false),
	block("2001::/23", "IETF Protocol Assignments", "RFC 2928", false),
	block("2001::/32", "TEREDO", "RFC 4380, RFC 8190", false),
	block("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", true),
	block("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", true),
	block("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", true),
	block("2001:2::/48", "Benchmarking", "RFC 5180, RFC Errata 1752", false),
	block("2001:3::/32", "AMT", "RFC 7450", true),
	block("2001:4:112::/48", "AS112-v6", "RFC 7535", true),
	block("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", false),
	block("2001:20::/28", "ORCHIDv2", "RFC 7343", true),
	block("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", true),
	block("2001:db8::/32", "Documentation", "RFC 3849", false),
	block("2002::/16", "6to4", "RFC 3056", false),
	block("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", true),
	block("3fff::/20", "Documentation", "RFC 9637", false),
	block("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", false),
	block("fc00::/7", "Unique-Local", "RFC 4193, RFC 8190", false),
	block("fe80::/10", "Link-Local Unicast", "RFC 4291", false),

	// Not in the registries, and not public either.
	block("224.0.0.0/4", "IPv4 multicast", "RFC 5771", false),
	block("::/96", "IPv4-compatible IPv6 address (deprecated)", "RFC 4291 §2.5.5.1", false),
	block("fec0::/10", "Site-local unicast (deprecated)", "RFC 3879", false),
	block("ff00::/8", "IPv6 multicast", "RFC 4291 §2.7", false),
}

// nat64 is the well-known NAT64 prefix: globally reachable by the
// registry, but it reaches the IPv4 address in its last 32 bits, which
// must be public in turn.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// globalUnicast6 is the IPv6 global unicast space allocated so far
// (RFC 4291 §2.4, the IANA IPv6 Address Space registry); everything
// outside it is reserved, special or unassigned.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// notPublic reports whether a lies in a block that is not globally
// reachable. It fails closed: an address in a non-global block is refused
// even where a more specific entry is global (192.0.0.9 in 192.0.0.0/24,
// 2001:1::1 in 2001::/23: anycast services, never a metadata host). An
// IPv4-mapped address is its IPv4 address; a NAT64 address (64:ff9b::/96)
// is judged by the IPv4 address it embeds; every 6to4 (2002::/16) and
// Teredo (2001::/32) address is refused, whatever it embeds: both are
// deprecated tunnels (RFC 7526, RFC 8190) and a public host is reachable
// at its own address. Any other IPv6 address outside 2000::/3 is refused
// (::ffff:0:7f00:1, 4000::1, fe00::1, 64:ff9b:2::1: reserved or
// unassigned, never a public host).
func notPublic(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() && !globalUnicast6.Contains(a) && !nat64.Contains(a) {
		return true
	}
	for _, b := range specialBlocks {
		if !b.Global && b.Prefix.Contains(a) {
			return true
		}
	}
	if nat64.Contains(a) {
		b := a.As16()
		return notPublic(netip.AddrFrom4([4]byte(b[12:])))
	}
	return false
}
