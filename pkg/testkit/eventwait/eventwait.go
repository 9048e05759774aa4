// Package eventwait bounds a test's wait for an event by the test binary's
// own deadline (go test -timeout), never by a guess at the machine's
// speed: on a loaded machine an event may take long, and only a wait that
// would outlast the whole run is a failure.
package eventwait

import (
	"testing"
	"time"
)

// margin is left before the binary's deadline, so a test fails with its
// own message rather than the timeout's goroutine dump.
const margin = 30 * time.Second

// GiveUp returns a channel that fires shortly before the test binary's
// deadline, or never when it has none.
func GiveUp(t testing.TB) <-chan time.Time {
	t.Helper()
	d, ok := deadline(t)
	if !ok {
		return nil
	}
	return time.After(time.Until(d.Add(-margin)))
}

func deadline(t testing.TB) (time.Time, bool) {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return dt.Deadline()
	}
	return time.Time{}, false
}
