package executor

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "off": 0, "123": 123, "123B": 123, "64MiB": 64 << 20, "2KiB": 2048, "1GiB": 1 << 30, "3TiB": 3 << 40, " 8MiB ": 8 << 20,
	} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5MiB", "64MB", "64mib", "MiB", "9999999999TiB", "lots"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", in)
		}
	}
	for _, n := range []int64{0, 1, 1023, 2048, 64 << 20, 3 << 30, DefaultMemoryLimit} {
		if got, err := ParseByteSize(FormatByteSize(n)); err != nil || got != n {
			t.Errorf("FormatByteSize(%d) = %q does not parse back: %d, %v", n, FormatByteSize(n), got, err)
		}
	}
}

func TestApplyMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })

	if got, fromEnv := ApplyMemoryLimit(DefaultMemoryLimit); fromEnv || got != DefaultMemoryLimit || debug.SetMemoryLimit(-1) != DefaultMemoryLimit {
		t.Fatalf("default: %d, %v", got, fromEnv)
	}
	if got, _ := ApplyMemoryLimit(0); got != math.MaxInt64 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("off: %d", got)
	}
	// GOMEMLIMIT wins: the runtime read it at start; here it is set by hand.
	t.Setenv("GOMEMLIMIT", "40MiB")
	debug.SetMemoryLimit(40 << 20)
	if got, fromEnv := ApplyMemoryLimit(DefaultMemoryLimit); !fromEnv || got != 40<<20 || debug.SetMemoryLimit(-1) != 40<<20 {
		t.Fatalf("with GOMEMLIMIT: %d, %v", got, fromEnv)
	}
}
