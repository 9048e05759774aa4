package executor

import (
	"errors"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultMemoryLimit is the soft memory limit the bridge gives the Go
// runtime (bytes). It is far above the heap of ordinary calls (a few MiB),
// so it costs nothing there. When a large resource passes through, it makes
// the collector run before the heap doubles: a 25 MiB round trip peaks at
// about 2.7× the payload instead of 6×. It is soft: when more is live, the
// collector works harder (at most about half the CPU); it never stops or
// kills the process.
const DefaultMemoryLimit int64 = 64 << 20

// ApplyMemoryLimit sets limit (bytes; 0 means none) as the Go runtime's
// soft memory limit, unless the GOMEMLIMIT environment variable is set,
// which wins. It returns the limit now in force and whether it came from
// GOMEMLIMIT.
func ApplyMemoryLimit(limit int64) (inForce int64, fromEnv bool) {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return debug.SetMemoryLimit(-1), true
	}
	if limit <= 0 {
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit, false
}

// ParseByteSize parses a size in the GOMEMLIMIT syntax: a non-negative
// integer with an optional unit B, KiB, MiB, GiB or TiB. "off" and "0"
// mean no limit and parse as 0.
func ParseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "off" {
		return 0, nil
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, shift = strings.TrimSuffix(s, u.suffix), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, errors.New("want a size such as 64MiB, 1GiB or 104857600, or off")
	}
	return n << shift, nil
}

// FormatByteSize renders n in the syntax ParseByteSize reads, with the
// largest unit that divides it.
func FormatByteSize(n int64) string {
	if n <= 0 {
		return "off"
	}
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
