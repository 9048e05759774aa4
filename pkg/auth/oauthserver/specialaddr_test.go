package oauthserver

import (
	"net/netip"
	"testing"
)

// registryRow is one entry of an IANA special-purpose registry as the
// registry prints it, with addresses inside it to dial. public says
// whether a document may be fetched from them: false for every entry that
// is not globally reachable, and for the global entries nested in a
// non-global block (fail closed).
type registryRow struct {
	block  string
	addrs  []string
	public bool
}

// ipv4Registry: https://www.iana.org/assignments/iana-ipv4-special-registry
var ipv4Registry = []registryRow{
	{"0.0.0.0/8", []string{"0.0.0.1", "0.255.255.255"}, false},
	{"0.0.0.0/32", []string{"0.0.0.0"}, false},
	{"10.0.0.0/8", []string{"10.0.0.1", "10.255.255.254"}, false},
	{"100.64.0.0/10", []string{"100.64.0.1", "100.127.255.254"}, false},
	{"127.0.0.0/8", []string{"127.0.0.1", "127.255.255.254"}, false},
	{"169.254.0.0/16", []string{"169.254.169.254", "169.254.0.1"}, false},
	{"172.16.0.0/12", []string{"172.16.0.1", "172.31.255.254"}, false},
	{"192.0.0.0/24", []string{"192.0.0.100", "192.0.0.255"}, false},
	{"192.0.0.0/29", []string{"192.0.0.1", "192.0.0.7"}, false},
	{"192.0.0.8/32", []string{"192.0.0.8"}, false},
	{"192.0.0.9/32", []string{"192.0.0.9"}, false},   // global, inside 192.0.0.0/24
	{"192.0.0.10/32", []string{"192.0.0.10"}, false}, // global, inside 192.0.0.0/24
	{"192.0.0.170/32", []string{"192.0.0.170"}, false},
	{"192.0.0.171/32", []string{"192.0.0.171"}, false},
	{"192.0.2.0/24", []string{"192.0.2.1", "192.0.2.255"}, false},
	{"192.31.196.0/24", []string{"192.31.196.1"}, true},
	{"192.52.193.0/24", []string{"192.52.193.1"}, true},
	{"192.88.99.0/24", []string{"192.88.99.1"}, false},
	{"192.88.99.2/32", []string{"192.88.99.2"}, false},
	{"192.168.0.0/16", []string{"192.168.0.1", "192.168.255.254"}, false},
	{"192.175.48.0/24", []string{"192.175.48.1"}, true},
	{"198.18.0.0/15", []string{"198.18.0.1", "198.19.255.254"}, false},
	{"198.51.100.0/24", []string{"198.51.100.1"}, false},
	{"203.0.113.0/24", []string{"203.0.113.1"}, false},
	{"240.0.0.0/4", []string{"240.0.0.1", "254.255.255.254"}, false},
	{"255.255.255.255/32", []string{"255.255.255.255"}, false},
}

// ipv6Registry: https://www.iana.org/assignments/iana-ipv6-special-registry
var ipv6Registry = []registryRow{
	{"::1/128", []string{"::1"}, false},
	{"::/128", []string{"::"}, false},
	{"::ffff:0:0/96", []string{"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254"}, false},
	{"64:ff9b::/96", []string{"64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::c0a8:1"}, false},
	{"64:ff9b:1::/48", []string{"64:ff9b:1::a9fe:a9fe", "64:ff9b:1::7f00:1", "64:ff9b:1::808:808"}, false},
	{"100::/64", []string{"100::1"}, false},
	{"100:0:0:1::/64", []string{"100:0:0:1::1"}, false},
	{"2001::/23", []string{"2001:100::1", "2001:1ff::1"}, false},
	{"2001::/32", []string{"2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"}, false},
	{"2001:1::1/128", []string{"2001:1::1"}, false}, // global, inside 2001::/23
	{"2001:1::2/128", []string{"2001:1::2"}, false}, // likewise
	{"2001:1::3/128", []string{"2001:1::3"}, false}, // likewise
	{"2001:2::/48", []string{"2001:2::1"}, false},
	{"2001:3::/32", []string{"2001:3::1"}, false},         // global, inside 2001::/23
	{"2001:4:112::/48", []string{"2001:4:112::1"}, false}, // likewise
	{"2001:10::/28", []string{"2001:10::1"}, false},
	{"2001:20::/28", []string{"2001:20::1"}, false}, // global, inside 2001::/23
	{"2001:30::/28", []string{"2001:30::1"}, false}, // likewise
	{"2001:db8::/32", []string{"2001:db8::1"}, false},
	{"2002::/16", []string{"2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:a00:1::1", "2002:808:808::1"}, false},
	{"2620:4f:8000::/48", []string{"2620:4f:8000::1"}, true},
	{"3fff::/20", []string{"3fff::1", "3fff:fff:ffff::1"}, false},
	{"5f00::/16", []string{"5f00::1"}, false},
	{"fc00::/7", []string{"fc00::1", "fd12:3456::1"}, false},
	{"fe80::/10", []string{"fe80::1", "febf::1"}, false},
}

// beyondRegistries: blocks outside the registries that are no more
// public, and public addresses that must stay reachable.
var beyondRegistries = []registryRow{
	{"224.0.0.0/4 multicast", []string{"224.0.0.1", "239.255.255.250"}, false},
	{"::/96 IPv4-compatible", []string{"::127.0.0.1", "::a9fe:a9fe", "::808:808"}, false},
	{"fec0::/10 site-local", []string{"fec0::1", "feff::1"}, false},
	{"ff00::/8 multicast", []string{"ff02::1", "ff05::2"}, false},
	{"IPv6 outside 2000::/3", []string{"::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "::1:7f00:1", "0:0:0:0:1::7f00:1",
		"4000::1", "8000::1", "e000::1", "fe00::1", "64:ff9b:2::7f00:1", "100::1:0:0:1", "1fff:ffff::1"}, false},
	{"public", []string{"8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001::1", "::ffff:8.8.8.8", "64:ff9b::808:808"}, true},
}

// TestPublicAddrRegistries: every address of every registry entry is
// refused unless the entry is globally reachable and not nested in a block
// that is not; embedded addresses (IPv4-mapped, NAT64, 6to4, IPv4-
// compatible) are refused when they embed an internal address.
func TestPublicAddrRegistries(t *testing.T) {
	for _, table := range [][]registryRow{ipv4Registry, ipv6Registry, beyondRegistries} {
		for _, row := range table {
			for _, s := range row.addrs {
				a := netip.MustParseAddr(s)
				if p, err := netip.ParsePrefix(row.block); err == nil && !p.Contains(a.Unmap()) && !p.Contains(a) {
					t.Fatalf("test data: %s is not in %s", s, row.block)
				}
				if got := publicAddr(a, false); got != row.public {
					t.Errorf("%s (%s): public %v, want %v", s, row.block, got, row.public)
				}
			}
		}
	}
}

// TestSpecialBlocksCoverRegistries: the table names every registry entry
// with its reachability.
func TestSpecialBlocksCoverRegistries(t *testing.T) {
	have := map[string]bool{}
	for _, b := range specialBlocks {
		have[b.Prefix.String()] = b.Global
	}
	for _, row := range append(append([]registryRow{}, ipv4Registry...), ipv6Registry...) {
		global, ok := have[netip.MustParsePrefix(row.block).String()]
		if !ok {
			t.Errorf("%s is missing from specialBlocks", row.block)
		}
		if row.public && !global {
			t.Errorf("%s is globally reachable in the registry", row.block)
		}
	}
}

// TestDialControlRefusesEmbeddedForms: the connect-time check sees the
// resolved address, so a name resolving to an embedded internal address is
// refused before any packet is sent.
func TestDialControlRefusesEmbeddedForms(t *testing.T) {
	control := dialControl(false)
	for _, addr := range []string{"[64:ff9b::a9fe:a9fe]:443", "[::ffff:127.0.0.1]:443", "[2002:7f00:1::]:443",
		"[64:ff9b:1::7f00:1]:443", "[::127.0.0.1]:443", "[fec0::1]:443", "198.18.0.1:443", "240.0.0.1:443", "192.0.0.1:443", "not-an-address"} {
		if control("tcp", addr, nil) == nil {
			t.Errorf("%s was dialled", addr)
		}
	}
	if err := control("tcp", "[2606:4700::1111]:443", nil); err != nil {
		t.Errorf("a public address was refused: %v", err)
	}
}
