//go:build integration

package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplintc"
	"github.com/notebridge/notebridge/pkg/mcpadapter/mcptest"
)

// TestRealJoplinCreatesAreSerialisedAcrossProcesses: two real
// `notebridge mcp stdio` processes sharing a state directory against one real
// Joplin each send 10 identical create_note calls at once; in each of 3
// trials Joplin ends up with exactly one note and every other call is
// NOTE_ALREADY_EXISTS. (Without the cross-process lock this made two notes
// in 3 of 3 trials.)
func TestRealJoplinCreatesAreSerialisedAcrossProcesses(t *testing.T) {
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	jc, err := joplin.New(joplin.Config{BaseURL: j.URL(), TokenFile: j.TokenFile, AvailabilityWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	for trial := 1; trial <= 3; trial++ {
		t.Run(fmt.Sprint("trial ", trial), func(t *testing.T) {
			var nb struct {
				ID string `json:"id"`
			}
			if err := jc.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": fmt.Sprint("Race ", trial)}, &nb); err != nil {
				t.Fatal(err)
			}
			created, exists := raceCreates(t, j.URL(), j.TokenFile, state, nb.ID, "Same title")
			if n := notesTitled(t, jc, nb.ID, "Same title"); n != 1 || created != 1 || exists != processes*callsPerClient-1 {
				t.Fatalf("%d notes in Joplin, %d created, %d NOTE_ALREADY_EXISTS; want 1, 1, %d", n, created, exists, processes*callsPerClient-1)
			}
		})
	}
}
