package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/filelocktest"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// Two processes each send this many identical creates at once.
const (
	processes      = 2
	callsPerClient = 10
)

// raceCreates starts two `notebridge mcp stdio` processes sharing state
// (the state directory) against the Joplin at joplinURL, sends
// callsPerClient identical create_note calls from each at once, and returns
// how many succeeded and how many were NOTE_ALREADY_EXISTS; any other
// answer fails the test.
func raceCreates(t *testing.T, joplinURL, tokenFile, state, notebook, title string) (created, exists int) {
	t.Helper()
	var calls []mcptest.CallFunc
	for range processes {
		c := mcptest.Binary(t, binPath, "--joplin-url", joplinURL, "--joplin-token-file", tokenFile,
			"--state-dir", state, "--joplin-wait", "10s")
		calls = append(calls, mcptest.Caller(t, c))
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []string
	)
	start := make(chan struct{})
	for _, call := range calls {
		for range callsPerClient {
			wg.Go(func() {
				<-start
				_, derr := call(context.Background(), "create_note", map[string]any{"notebook_id": notebook, "title": title})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case derr == nil:
					created++
				case derr.Code == domainerr.NoteAlreadyExists:
					exists++
				default:
					errs = append(errs, fmt.Sprint(derr))
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("unexpected answers: %v", errs)
	}
	return created, exists
}

// notesTitled counts the notes in notebook with the given title, trashed
// ones included, reading Joplin directly.
func notesTitled(t *testing.T, jc *joplin.Client, notebook, title string) int {
	t.Helper()
	notes, err := joplin.ListAll[struct {
		ParentID string `json:"parent_id"`
		Title    string `json:"title"`
	}](context.Background(), jc, "/notes", url.Values{"fields": {"parent_id,title"}, "include_deleted": {"1"}}, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, note := range notes {
		if note.ParentID == notebook && note.Title == title {
			n++
		}
	}
	return n
}

// overlapGate holds the first create that reaches Joplin until either a
// second create arrives (two preflights ran unserialised: the duplicate is
// then certain) or a process is seen waiting for the cross-process lock
// file (the serialisation works). It never sleeps its way to an outcome.
type overlapGate struct {
	t        *testing.T
	lockPath string

	mu       sync.Mutex
	seen     int
	release  chan struct{}
	overlaps bool
}

func newOverlapGate(t *testing.T, lockPath string) *overlapGate {
	return &overlapGate{t: t, lockPath: lockPath, release: make(chan struct{})}
}

// reset readies the gate for another trial.
func (g *overlapGate) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen, g.release, g.overlaps = 0, make(chan struct{}), false
}

// overlapped reports whether a second create arrived while the first was held.
func (g *overlapGate) overlapped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.overlaps
}

// hold sees each request before Joplin does, and holds the first create.
func (g *overlapGate) hold(r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/notes" {
		return
	}
	g.mu.Lock()
	g.seen++
	first, release := g.seen == 1, g.release
	if !first && !isClosed(release) {
		g.overlaps = true
		close(release)
	}
	g.mu.Unlock()
	if first {
		go g.releaseWhenLockWaited(release)
		<-release
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// releaseWhenLockWaited releases the held create once a process waits for
// the lock file (observed in /proc/locks).
func (g *overlapGate) releaseWhenLockWaited(release chan struct{}) {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		waiting, _ := filelocktest.Waiting(g.lockPath)
		g.mu.Lock()
		done := isClosed(release)
		if !done && (waiting || time.Now().After(deadline)) {
			if !waiting {
				g.t.Errorf("neither a second create nor a lock waiter within a minute")
			}
			close(release)
			done = true
		}
		g.mu.Unlock()
		if done {
			return
		}
	}
}

// TestCreatesAreSerialisedAcrossProcesses: two real bridge processes share
// one (fake) Joplin and one state directory and each send 10 identical
// create_note calls at once. The first create to reach Joplin is held until
// the other process either sends a create too (no cross-process
// serialisation: a duplicate) or waits for the lock. Exactly one note is
// created and every other call is NOTE_ALREADY_EXISTS, in each of 3 trials.
func TestCreatesAreSerialisedAcrossProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no /proc/locks: cannot observe lock waiters")
	}
	const token = "crossprocess-token-0123456789"
	fake := joplinfake.New(token)
	var gate *overlapGate
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gate.hold(r)
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	jc, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tokenFile})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	gate = newOverlapGate(t, joplinops.LockFile(state, jc.Endpoint()))
	raceTrials(t, jc, srv.URL, tokenFile, state, gate)
}

// raceTrials runs 3 trials of raceCreates, each in a fresh notebook behind
// a reset gate, and requires exactly one note and 19 NOTE_ALREADY_EXISTS
// answers in each.
func raceTrials(t *testing.T, jc *joplin.Client, joplinURL, tokenFile, state string, gate *overlapGate) {
	for trial := 1; trial <= 3; trial++ {
		t.Run(fmt.Sprint("trial ", trial), func(t *testing.T) {
			gate.reset()
			var nb struct {
				ID string `json:"id"`
			}
			if err := jc.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": fmt.Sprint("Race ", trial)}, &nb); err != nil {
				t.Fatal(err)
			}
			created, exists := raceCreates(t, joplinURL, tokenFile, state, nb.ID, "Same title")
			if gate.overlapped() {
				t.Errorf("a second create reached Joplin while the first was in flight")
			}
			if n := notesTitled(t, jc, nb.ID, "Same title"); n != 1 || created != 1 || exists != processes*callsPerClient-1 {
				t.Fatalf("%d notes in Joplin, %d created, %d NOTE_ALREADY_EXISTS; want 1, 1, %d", n, created, exists, processes*callsPerClient-1)
			}
		})
	}
}
