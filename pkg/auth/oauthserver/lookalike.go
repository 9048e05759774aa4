package oauthserver

import (
	"errors"
	"net"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Registration is open, so what a client says about itself is all the
// owner sees on the consent page. These checks keep it from imitating
// another client: a redirect host must be plain ASCII (an
// internationalised domain registers its punycode form, which does not
// look like a Latin name), and a client name must be visible text in one
// script.

// errNonASCIIHost is the refusal of a host with a non-ASCII character.
var errNonASCIIHost = errors.New("has a host that is not ASCII: register an internationalised domain name in its punycode (xn--) form")

// checkHost accepts an IP address or a DNS name of ASCII letters, digits
// and hyphens (labels of 1 to 63 characters, no empty label, so no
// trailing dot). host is a URL's Hostname, percent-decoded.
func checkHost(host string) error {
	if strings.IndexFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
		return errNonASCIIHost
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if len(host) > 253 {
		return errors.New("has a host name longer than 253 characters")
	}
	for _, label := range strings.Split(host, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' ||
			strings.IndexFunc(label, func(r rune) bool { return !isLDH(r) }) >= 0 {
			return errors.New("has a host that is not an IP address or a DNS name of letters, digits and hyphens")
		}
	}
	return nil
}

func isLDH(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-'
}

// scriptSets are the script combinations a client name may use beyond a
// single script: the "highly restrictive" level of Unicode TS #39 §5.2
// (Latin with the scripts Chinese, Japanese and Korean are written in).
var scriptSets = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// errClientName is the refusal of a client name, stable and without the
// name itself.
var errClientName = badMetadata("client_name must be visible NFKC-normalised text of at most %d bytes in one script "+
	"(Latin may be mixed with Han, Hiragana, Katakana, Bopomofo or Hangul only), without control, format, "+
	"invisible or bidirectional characters, without spaces other than U+0020, and not made only of "+
	"letters that imitate Latin ones", maxClientNameLen)

// CheckClientName reports whether a client name may be shown to the owner
// as it is: at most maxClientNameLen bytes of valid UTF-8; letters, marks,
// numbers, punctuation, symbols and the ASCII space only (no control,
// format or bidirectional character, no other space, no default-ignorable
// code point such as U+3164 HANGUL FILLER or a variation selector); and
// one script besides Common and Inherited, or one of scriptSets; in NFKC
// form and not a whole-script imitation of Latin (confusableName). Names
// that mix Cyrillic or Greek letters into Latin ones are refused.
func CheckClientName(name string) error {
	if len(name) > maxClientNameLen || !utf8.ValidString(name) || confusableName(name) {
		return errClientName
	}
	var scripts []string
	for _, r := range name {
		if r != ' ' && (!unicode.IsPrint(r) || unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)) {
			return errClientName
		}
		if s := scriptOf(r); s != "" && !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) <= 1 {
		return nil
	}
	for _, allowed := range scriptSets {
		if !slices.ContainsFunc(scripts, func(s string) bool { return !slices.Contains(allowed, s) }) {
			return nil
		}
	}
	return errClientName
}

// scriptNames lists unicode.Scripts in a fixed order (the tables are
// disjoint, so the order only makes the lookup deterministic).
var scriptNames = func() []string {
	names := make([]string, 0, len(unicode.Scripts))
	for n := range unicode.Scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}()

// scriptOf names the script of r, or "" for Common, Inherited and
// unassigned code points.
func scriptOf(r rune) string {
	if r < utf8.RuneSelf {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	for _, n := range scriptNames {
		if n != "Common" && n != "Inherited" && unicode.Is(unicode.Scripts[n], r) {
			return n
		}
	}
	return ""
}
