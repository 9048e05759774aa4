package okfops

import (
	"slices"
	"testing"
)

// TestParseRoots: the --okf-roots list drops empty items and refuses any
// root that is not absolute and clean.
func TestParseRoots(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{" , ,", nil, true},
		{"/srv/okf", []string{"/srv/okf"}, true},
		{" /srv/okf , /home/u/bundles ,", []string{"/srv/okf", "/home/u/bundles"}, true},
		{"relative/dir", nil, false},
		{"/srv/okf/", nil, false},
		{"/ok,/srv/../okf", nil, false},
	} {
		got, err := ParseRoots(tc.list)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("ParseRoots(%q) = %q, %v; want %q, ok=%v", tc.list, got, err, tc.want, tc.ok)
		}
	}
}
