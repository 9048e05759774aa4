package syncstate

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sample = `{
  "schema": 1, "target": "webdav", "state": "error", "interval_seconds": 300,
  "completed_syncs": 12, "last_attempt_at": "2026-12-02T01:02:03Z",
  "last_success_at": "2026-12-02T01:00:00Z", "next_sync_at": null,
  "consecutive_failures": 2,
  "last_error": {"code": "SYNC_UNREACHABLE", "setting": "NOTEBRIDGE_SYNC_URL", "message": "cannot reach dav.example.org", "at": "2026-12-02T01:02:03Z"},
  "e2ee": {"enabled": true, "master_password_set": true, "password_ok": null, "items_encrypted": 3},
  "updated_at": "2026-12-02T01:02:04Z", "a_future_field": {"x": 1}
}`

func TestReadParsesSchema1AndIgnoresUnknownFields(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, StatusFile), []byte(sample), 0o600)
	st, err := NewReader(dir).Read()
	if err != nil {
		t.Fatal(err)
	}
	if st.Target != "webdav" || st.State != "error" || st.CompletedSyncs != 12 || st.LastError == nil ||
		st.LastError.Setting != "NOTEBRIDGE_SYNC_URL" || st.E2EE == nil || *st.E2EE.ItemsEncrypted != 3 ||
		st.E2EE.PasswordOK != nil || st.NextSyncAt != nil || !st.LastSuccessAt.Equal(time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)) {
		t.Errorf("parsed %+v", st)
	}
}

func TestReadReportsMissingAndCorruptFiles(t *testing.T) {
	if _, err := NewReader("").Read(); err != ErrNotConfigured {
		t.Errorf("no directory: %v, want ErrNotConfigured", err)
	}
	dir := t.TempDir()
	r := NewReader(dir)
	if _, err := r.Read(); err != ErrNotConfigured {
		t.Errorf("no file: %v, want ErrNotConfigured", err)
	}
	for name, content := range map[string]string{
		"not JSON":      `{"schema": 1, "state": "idle"`,
		"other schema":  `{"schema": 2, "state": "idle"}`,
		"unknown state": `{"schema": 1, "state": "dancing"}`,
		"wrong type":    `{"schema": 1, "state": "idle", "completed_syncs": "many"}`,
		"too large":     `{"schema": 1, "state": "idle", "pad": "` + strings.Repeat("x", maxStatusBytes) + `"}`,
	} {
		p := filepath.Join(dir, StatusFile)
		os.Remove(p)
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := r.Read(); err == nil || err == ErrNotConfigured {
			t.Errorf("%s: err %v, want a parse error", name, err)
		}
		if _, ok := r.Generation(); ok {
			t.Errorf("%s: a generation from a bad file", name)
		}
	}
}

// TestReadSeesEveryReplacement: the supervisor replaces the file by
// rename; each new version is read, an unchanged one is not parsed again.
func TestReadSeesEveryReplacement(t *testing.T) {
	dir := t.TempDir()
	r := NewReader(dir)
	for i, n := range []string{"1", "2", "10"} {
		tmp := filepath.Join(dir, "tmp")
		os.WriteFile(tmp, []byte(`{"schema":1,"state":"idle","completed_syncs":`+n+`}`), 0o600)
		// distinct modification times, as successive writes have
		mod := time.Date(2026, 12, 2, 0, 0, i, 0, time.UTC)
		os.Chtimes(tmp, mod, mod)
		os.Rename(tmp, filepath.Join(dir, StatusFile))
		if g, ok := r.Generation(); !ok || g != map[string]int64{"1": 1, "2": 2, "10": 10}[n] {
			t.Errorf("generation %d %v after writing %s", g, ok, n)
		}
	}
}

// fakeClock hands the requester a channel per interval that the test fires.
type fakeClock struct{ ticks chan chan time.Time }

func (c *fakeClock) after(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.ticks <- ch
	return ch
}

func TestRequesterCoalescesABurstAndWritesTheTime(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{ticks: make(chan chan time.Time, 4)}
	attempts := make(chan error, 8)
	now := time.Date(2026, 12, 2, 1, 2, 3, 0, time.UTC)
	r := newRequester(dir, nil, func() time.Time { return now }, clock.after, func(err error) { attempts <- err })
	defer r.Close()

	r.Request()
	if err := <-attempts; err != nil {
		t.Fatal(err)
	}
	tick := <-clock.ticks // the writer now waits out its interval
	b, _ := os.ReadFile(filepath.Join(dir, RequestFile))
	if string(b) != "2026-12-02T01:02:03Z\n" {
		t.Errorf("request file %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(dir, RequestFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	for range 50 { // a burst within the interval: one more request
		r.Request()
	}
	select {
	case err := <-attempts:
		t.Fatalf("a write within the interval (%v)", err)
	default:
	}
	now = now.Add(time.Second)
	tick <- now
	if err := <-attempts; err != nil {
		t.Fatal(err)
	}
	next := <-clock.ticks
	next <- now
	select {
	case err := <-attempts:
		t.Fatalf("the burst gave a second write (%v)", err)
	default:
	}
	b, _ = os.ReadFile(filepath.Join(dir, RequestFile))
	if string(b) != "2026-12-02T01:02:04Z\n" {
		t.Errorf("request file after the burst %q", b)
	}
}

func TestRequesterLogsAFailureOnceAndNeverBlocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing") // no such directory: every write fails
	var logs bytes.Buffer
	clock := &fakeClock{ticks: make(chan chan time.Time, 4)}
	attempts := make(chan error, 8)
	r := newRequester(dir, slog.New(slog.NewTextHandler(&logs, nil)), time.Now, clock.after, func(err error) { attempts <- err })
	defer r.Close()
	for range 3 {
		r.Request()
		if err := <-attempts; err == nil {
			t.Fatal("a write into a missing directory succeeded")
		}
		(<-clock.ticks) <- time.Now()
	}
	if n := strings.Count(logs.String(), "cannot ask the Joplin container for a sync"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	os.MkdirAll(dir, 0o700)
	r.Request()
	if err := <-attempts; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "sync requests are written again") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
}

func TestNilRequesterIsANoOp(t *testing.T) {
	var r *Requester
	r.Request()
	r.Close()
}

// TestCloseWritesAPendingRequest: a write just before shutdown still asks
// for a sync.
func TestCloseWritesAPendingRequest(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{ticks: make(chan chan time.Time, 4)}
	attempts := make(chan error, 8)
	r := newRequester(dir, nil, time.Now, clock.after, func(err error) { attempts <- err })
	r.Request()
	<-attempts
	<-clock.ticks // within the interval
	os.Remove(filepath.Join(dir, RequestFile))
	r.Request()
	r.Close()
	if _, err := os.Stat(filepath.Join(dir, RequestFile)); err != nil {
		t.Errorf("the pending request was dropped at Close: %v", err)
	}
}
