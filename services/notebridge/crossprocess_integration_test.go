//go:build integration

package main

import (
	"os"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// TestRealJoplinCreatesAreSerialisedAcrossProcesses: two real
// `notebridge mcp stdio` processes sharing a state directory against one real
// Joplin each send 10 identical create_note calls at once; in each of 3
// trials Joplin ends up with exactly one note and every other call is
// NOTE_ALREADY_EXISTS. The proxy in front of Joplin holds the first create
// until the other process waits for the lock or sends a create too, so the
// test fails every time without cross-process serialisation.
func TestRealJoplinCreatesAreSerialisedAcrossProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no /proc/locks: cannot observe lock waiters")
	}
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	jc, err := joplin.New(joplin.Config{BaseURL: j.URL(), TokenFile: j.TokenFile, AvailabilityWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	gate := newOverlapGate(t, joplinops.LockFile(state, jc.Endpoint()))
	j.Proxy.Before(gate.hold)
	defer j.Proxy.Before(nil)
	raceTrials(t, jc, j.URL(), j.TokenFile, state, gate)
}
