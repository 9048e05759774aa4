package identity

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

const token = "fake-joplin-token-0123456789"

// joplinAt serves a fresh fake Joplin (one profile) and returns a guarded
// client for it, with the identity in state.
type env struct {
	fake  *joplinfake.Server
	c     *joplin.Client
	g     *Guard
	clock time.Time
}

func newEnv(t *testing.T, state string) *env {
	t.Helper()
	fake, url, tf := joplinfake.Serve(t, token)
	c, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tf, AvailabilityWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{fake: fake, c: c, clock: time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)}
	e.g = New(c, state, nil)
	e.g.now = func() time.Time { return e.clock }
	c.SetGuard(e.g)
	return e
}

func (e *env) notebook(t *testing.T, title string) string {
	t.Helper()
	var f struct{ ID string }
	if err := e.c.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": title}, &f); err != nil {
		t.Fatal(err)
	}
	return f.ID
}

func code(err error) domainerr.Code {
	if de, ok := domainerr.As(err); ok {
		return de.Code
	}
	return ""
}

// TestAnotherJoplinIsRefusedUntilAccepted is the newcomer's stumble: the
// bridge served one Joplin, then a setting points it at another (the
// bundled one instead of the desktop's). Every call is refused with
// JOPLIN_CHANGED naming how to accept it, nothing is written there, and
// after `notebridge joplin forget` the new one is served.
func TestAnotherJoplinIsRefusedUntilAccepted(t *testing.T) {
	state := t.TempDir()
	desktop := newEnv(t, state)
	desktop.notebook(t, "Personal") // first contact: empty
	desktop.notebook(t, "Work")
	desktop.clock = desktop.clock.Add(emptyRecheck)
	desktop.c.Get(context.Background(), "/notes", nil, nil) // anchors recorded
	rec, err := Load(filepath.Join(state, FileName))
	if err != nil || len(rec.Anchors) != 2 {
		t.Fatalf("identity after first contact: %+v %v", rec, err)
	}
	if fi, _ := os.Stat(filepath.Join(state, FileName)); fi.Mode().Perm() != 0o600 {
		t.Errorf("identity file mode %v", fi.Mode().Perm())
	}

	bundled := newEnv(t, state) // the same state directory, another Joplin
	if err := bundled.c.Write(joplin.Unguarded(context.Background()), "POST", "/folders", nil, map[string]any{"title": "Theirs"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := bundled.c.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": "Theirs"}, nil); code(err) != domainerr.JoplinChanged {
		t.Fatalf("write to another Joplin: %v, want JOPLIN_CHANGED", err)
	}
	var accepted atomic.Int32
	bundled.g.OnAccept = func() { accepted.Add(1) }
	err = bundled.c.Get(context.Background(), "/notes", nil, nil)
	if code(err) != domainerr.JoplinChanged {
		t.Fatalf("read from another Joplin: %v, want JOPLIN_CHANGED", err)
	}
	de, _ := domainerr.As(err)
	if de.Details["accept_with"] != ForgetCommand || de.Retryable {
		t.Errorf("refusal %+v", de)
	}
	if n := bundled.fake.CountWrites(); n != 1 {
		t.Errorf("%d writes reached the other Joplin, want only its own", n)
	}
	// The refusal is answered without asking Joplin again for a while.
	before := len(bundled.fake.Requests())
	bundled.c.Get(context.Background(), "/notes", nil, nil)
	if n := len(bundled.fake.Requests()) - before; n != 0 {
		t.Errorf("a refused Joplin was asked %d more times within %v", n, refuseFor)
	}
	// The first Joplin is still served through a client of its own.
	if err := desktop.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Errorf("the recorded Joplin: %v", err)
	}

	if had, err := Forget(state); !had || err != nil {
		t.Fatalf("forget: %v %v", had, err)
	}
	if err := bundled.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Fatalf("after forget: %v", err)
	}
	if accepted.Load() != 1 {
		t.Errorf("OnAccept ran %d times, want 1", accepted.Load())
	}
	if rec, _ := Load(filepath.Join(state, FileName)); len(rec.Anchors) != 1 || rec.Endpoint != bundled.c.Endpoint() {
		t.Errorf("identity after accepting: %+v", rec)
	}
	// The first Joplin's guard trusts what it verified until a loss of
	// contact makes it look again: it is now the other one.
	desktop.g.Lost()
	if code(desktop.c.Get(context.Background(), "/notes", nil, nil)) != domainerr.JoplinChanged {
		t.Error("the first Joplin, now another one, was not refused after a loss of contact")
	}
}

// TestEmptyJoplinGetsAnchorsLater: a Joplin that was empty at first
// contact is trusted, and looked at again a minute later to record what
// it then holds.
func TestEmptyJoplinGetsAnchorsLater(t *testing.T) {
	state := t.TempDir()
	e := newEnv(t, state)
	if err := e.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Fatal(err)
	}
	if rec, _ := Load(filepath.Join(state, FileName)); len(rec.Anchors) != 0 {
		t.Fatalf("anchors of an empty Joplin: %+v", rec)
	}
	e.notebook(t, "First")
	if rec, _ := Load(filepath.Join(state, FileName)); len(rec.Anchors) != 0 {
		t.Fatalf("looked again too early: %+v", rec)
	}
	e.clock = e.clock.Add(emptyRecheck)
	e.c.Get(context.Background(), "/notes", nil, nil)
	if rec, _ := Load(filepath.Join(state, FileName)); len(rec.Anchors) != 1 {
		t.Errorf("anchors a minute later: %+v", rec)
	}
}

// TestAnchorsOutliveDeletions: deleting the oldest notebook for good
// keeps the Joplin recognised by the others, and refreshes the anchors.
func TestAnchorsOutliveDeletions(t *testing.T) {
	state := t.TempDir()
	e := newEnv(t, state)
	first := e.notebook(t, "A")
	e.notebook(t, "B")
	e.clock = e.clock.Add(emptyRecheck)
	e.c.Get(context.Background(), "/notes", nil, nil) // anchors A and B recorded
	if err := e.c.Write(context.Background(), "DELETE", "/folders/"+first, map[string][]string{"permanent": {"1"}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.g.Lost()
	if err := e.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Fatalf("after deleting one anchor: %v", err)
	}
	rec, _ := Load(filepath.Join(state, FileName))
	if len(rec.Anchors) != 1 || rec.Anchors[0].ID == first {
		t.Errorf("anchors not refreshed: %+v", rec)
	}
}

func TestDamagedIdentityIsAClearRefusal(t *testing.T) {
	state := t.TempDir()
	os.WriteFile(filepath.Join(state, FileName), []byte("{"), 0o600)
	e := newEnv(t, state)
	err := e.c.Get(context.Background(), "/notes", nil, nil)
	if code(err) != domainerr.JoplinChanged {
		t.Fatalf("damaged identity: %v", err)
	}
	if had, _ := Forget(state); !had {
		t.Fatal("forget found nothing")
	}
	if err := e.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Fatalf("after forget: %v", err)
	}
}

// TestEmptyRecordRefusesAnotherAddressWithNotes: a bundled Joplin seen
// empty, then settings pointing the bridge at a desktop Joplin full of
// notes: refused, while the bundled one filling up by its first sync is
// recorded.
func TestEmptyRecordRefusesAnotherAddressWithNotes(t *testing.T) {
	state := t.TempDir()
	bundled := newEnv(t, state)
	if err := bundled.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Fatal(err)
	}
	desktop := newEnv(t, state)
	if err := desktop.c.Write(joplin.Unguarded(context.Background()), "POST", "/folders", nil, map[string]any{"title": "Mine"}, nil); err != nil {
		t.Fatal(err)
	}
	if code(desktop.c.Get(context.Background(), "/notes", nil, nil)) != domainerr.JoplinChanged {
		t.Fatal("a Joplin with notes at another address replaced an empty one silently")
	}
	bundled.notebook(t, "synced")
	bundled.clock = bundled.clock.Add(emptyRecheck)
	if err := bundled.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Fatal(err)
	}
	if rec, _ := Load(filepath.Join(state, FileName)); len(rec.Anchors) != 1 {
		t.Errorf("the bundled Joplin's first notebook was not recorded: %+v", rec)
	}
}

// TestRefusalIsLoggedOnce: a refused Joplin is asked again every
// refuseFor, and the refusal logged once, not at every look.
func TestRefusalIsLoggedOnce(t *testing.T) {
	state := t.TempDir()
	first := newEnv(t, state)
	if err := first.c.Write(joplin.Unguarded(context.Background()), "POST", "/folders", nil, map[string]any{"title": "A"}, nil); err != nil {
		t.Fatal(err)
	}
	first.c.Get(context.Background(), "/notes", nil, nil)
	other := newEnv(t, state)
	var logs bytes.Buffer
	other.g.log = slog.New(slog.NewTextHandler(&logs, nil))
	for range 3 {
		if code(other.c.Get(context.Background(), "/notes", nil, nil)) != domainerr.JoplinChanged {
			t.Fatal("not refused")
		}
		other.clock = other.clock.Add(refuseFor)
	}
	if n := strings.Count(logs.String(), "refusing to use it"); n != 1 {
		t.Errorf("refusal logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestRecordedJoplinBackIsNoNewJoplin: once the Joplin answering holds
// the recorded objects again (the settings were fixed), the refusal ends
// without OnAccept: nothing of another Joplin was cached meanwhile.
func TestRecordedJoplinBackIsNoNewJoplin(t *testing.T) {
	state := t.TempDir()
	first := newEnv(t, state)
	id := first.notebook(t, "A")
	first.clock = first.clock.Add(emptyRecheck)
	first.c.Get(context.Background(), "/notes", nil, nil)
	other := newEnv(t, state)
	var accepted atomic.Int32
	other.g.OnAccept = func() { accepted.Add(1) }
	if code(other.c.Get(context.Background(), "/notes", nil, nil)) != domainerr.JoplinChanged {
		t.Fatal("not refused")
	}
	// Clients choose ids: this Joplin now holds the recorded notebook.
	if err := other.c.Write(joplin.Unguarded(context.Background()), "POST", "/folders", nil, map[string]any{"id": id, "title": "A"}, nil); err != nil {
		t.Fatal(err)
	}
	other.clock = other.clock.Add(refuseFor)
	if err := other.c.Get(context.Background(), "/notes", nil, nil); err != nil {
		t.Fatalf("the recorded Joplin back: %v", err)
	}
	if accepted.Load() != 0 {
		t.Error("OnAccept ran for the Joplin served before")
	}
}
