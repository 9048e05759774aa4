package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/joplinbatch"
)

// fakeJoplin answers batch commands from a script and records them.
type fakeJoplin struct {
	calls  []string
	script func(line string) joplinbatch.Result
}

func (f *fakeJoplin) Run(_ context.Context, line string) (joplinbatch.Result, error) {
	f.calls = append(f.calls, line)
	return f.script(line), nil
}

// syncs counts the sync commands run so far.
func (f *fakeJoplin) syncs() int {
	n := 0
	for _, c := range f.calls {
		if c == "sync" {
			n++
		}
	}
	return n
}

// answering returns a script that answers sync with out() (read at each
// call) and the other commands plainly.
func answering(out *string) func(string) joplinbatch.Result {
	return func(line string) joplinbatch.Result {
		switch {
		case line == "sync":
			return joplinbatch.Result{Output: *out}
		case line == "e2ee status":
			return joplinbatch.Result{Output: "Encryption is: Disabled\n"}
		}
		return joplinbatch.Result{}
	}
}

var t0 = time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)

// newTestSupervisor makes a started supervisor for a WebDAV target with an
// interval, a status dir and a log buffer.
func newTestSupervisor(t *testing.T, interval time.Duration, j *fakeJoplin) (*Supervisor, StatusFile, *bytes.Buffer) {
	t.Helper()
	cfg, err := LoadConfig(env{envTarget: "webdav", envURL: "http://dav/joplin", envUser: "u",
		envInterval: interval.String()}.get, secretsDir(t, map[string]string{secretPassword: "s3cr3t-pw", secretMaster: "m4ster-pw"}))
	if err != nil {
		t.Fatal(err)
	}
	files := StatusFile{Dir: t.TempDir()}
	var log bytes.Buffer
	s := NewSupervisor(cfg, nil, j, files, ProfileLog{}, &log)
	s.Starting(t0)
	if err := s.Configure(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	s.Started(t0)
	return s, files, &log
}

// step runs the supervisor at t0+d.
func step(t *testing.T, s *Supervisor, d time.Duration) {
	t.Helper()
	if err := s.Step(context.Background(), t0.Add(d)); err != nil {
		t.Fatal(err)
	}
}

// request touches the bridge's request file with a distinct time.
func request(t *testing.T, files StatusFile, at time.Duration) {
	t.Helper()
	p := filepath.Join(files.Dir, requestName)
	if err := os.WriteFile(p, []byte(t0.Add(at).Format(time.RFC3339)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, t0.Add(at), t0.Add(at)); err != nil {
		t.Fatal(err)
	}
}

func readStatus(t *testing.T, files StatusFile) (Status, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(files.Dir, statusName))
	if err != nil {
		t.Fatal(err)
	}
	var s Status
	var raw map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return s, raw
}

// TestConfigureImportsSettingsBeforeTheServer: the settings go in through
// the batch with config --import-file from a private file that is gone
// afterwards.
func TestConfigureImportsSettingsBeforeTheServer(t *testing.T) {
	var imported map[string]any
	var mode os.FileMode
	j := &fakeJoplin{script: func(line string) joplinbatch.Result {
		if path, ok := strings.CutPrefix(line, "config --import-file "); ok {
			st, _ := os.Stat(path)
			mode = st.Mode().Perm()
			b, _ := os.ReadFile(path)
			json.Unmarshal(b, &imported)
		}
		return joplinbatch.Result{}
	}}
	_, _, log := newTestSupervisor(t, time.Minute, j)
	if imported["sync.6.password"] != "s3cr3t-pw" || imported["encryption.masterPassword"] != "m4ster-pw" || imported["sync.target"] != float64(6) {
		t.Errorf("imported %v", imported)
	}
	if mode != 0o600 {
		t.Errorf("settings file mode %04o, want 0600", mode)
	}
	path := strings.TrimPrefix(j.calls[0], "config --import-file ")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("settings file %s left behind", path)
	}
	if strings.Contains(log.String(), "s3cr3t") || strings.Contains(log.String(), "m4ster") {
		t.Errorf("the log shows a secret: %s", log)
	}
}

// TestScheduleStartIntervalAndDebouncedRequests: a sync at start, then
// one per interval; a burst of requests gives one sync 10 s after the last.
func TestScheduleStartIntervalAndDebouncedRequests(t *testing.T) {
	out := syncOK
	j := &fakeJoplin{script: answering(&out)}
	s, files, _ := newTestSupervisor(t, 5*time.Minute, j)

	step(t, s, 0)
	if j.syncs() != 1 {
		t.Fatalf("syncs at start = %d, want 1", j.syncs())
	}
	st, _ := readStatus(t, files)
	if st.State != StateIdle || st.CompletedSyncs != 1 || st.LastSuccessAt == nil || !st.NextSyncAt.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("status after the first sync: %+v", st)
	}

	// A burst of writes at 10 s .. 14 s: nothing until 10 s after the last.
	for i := range 5 {
		at := time.Duration(10+i) * time.Second
		request(t, files, at)
		step(t, s, at)
	}
	step(t, s, 23*time.Second)
	if j.syncs() != 1 {
		t.Fatalf("synced before the debounce ended: %d", j.syncs())
	}
	step(t, s, 24*time.Second)
	if j.syncs() != 2 {
		t.Fatalf("syncs after the burst = %d, want 2", j.syncs())
	}
	step(t, s, 25*time.Second)
	if j.syncs() != 2 {
		t.Fatalf("the same request synced twice")
	}
	// The interval counts from the last sync.
	step(t, s, 24*time.Second+5*time.Minute-time.Second)
	if j.syncs() != 2 {
		t.Fatal("synced before the interval")
	}
	step(t, s, 24*time.Second+5*time.Minute)
	if j.syncs() != 3 {
		t.Fatalf("syncs after the interval = %d, want 3", j.syncs())
	}
}

// TestRequestsThatNeverPauseSyncWithinAMinute: a write every second keeps
// postponing the debounce, but not past 60 s after the first.
func TestRequestsThatNeverPauseSyncWithinAMinute(t *testing.T) {
	out := syncOK
	j := &fakeJoplin{script: answering(&out)}
	s, files, _ := newTestSupervisor(t, time.Hour, j)
	step(t, s, 0)
	first := time.Duration(0)
	for sec := 1; sec <= 70; sec++ {
		at := time.Duration(sec) * time.Second
		request(t, files, at)
		step(t, s, at)
		if j.syncs() == 2 {
			first = at
			break
		}
	}
	if first != 61*time.Second {
		t.Fatalf("a continuous burst synced at %s, want 61s (60 s after the first request)", first)
	}
}

// TestFailuresBackOffAndRecover: failed syncs are reported with the code and
// setting, retried with doubling delays (requests wait for the backoff),
// and a success clears the error.
func TestFailuresBackOffAndRecover(t *testing.T) {
	out := syncFailed("request to http://dav/joplin/ failed, reason: connect ECONNREFUSED 10.0.0.2:80")
	j := &fakeJoplin{script: answering(&out)}
	s, files, log := newTestSupervisor(t, 5*time.Minute, j)

	step(t, s, 0)
	st, raw := readStatus(t, files)
	if st.State != StateError || st.ConsecutiveFailures != 1 || st.LastError == nil ||
		st.LastError.Code != CodeUnreachable || st.LastError.Setting != envURL || st.CompletedSyncs != 0 {
		t.Fatalf("status after a failure: %+v %+v", st, st.LastError)
	}
	if raw["last_success_at"] != nil {
		t.Errorf("last_success_at = %v, want null", raw["last_success_at"])
	}
	// Backoff: 30 s, then 60 s.
	request(t, files, 5*time.Second)
	step(t, s, 5*time.Second)
	step(t, s, 29*time.Second)
	if j.syncs() != 1 {
		t.Fatalf("retried during the backoff (a request must wait for it): %d syncs", j.syncs())
	}
	step(t, s, 30*time.Second)
	if j.syncs() != 2 {
		t.Fatalf("no retry after 30 s")
	}
	step(t, s, 89*time.Second)
	if j.syncs() != 2 {
		t.Fatalf("second retry too early")
	}
	out = syncOK
	step(t, s, 90*time.Second)
	st, _ = readStatus(t, files)
	if j.syncs() != 3 || st.State != StateIdle || st.LastError != nil || st.ConsecutiveFailures != 0 || st.CompletedSyncs != 1 {
		t.Fatalf("after recovery: %d syncs, %+v", j.syncs(), st)
	}
	if !strings.Contains(log.String(), "sync failed (2 in a row") {
		t.Errorf("log: %s", log)
	}
}

func TestBackoffIsCapped(t *testing.T) {
	s := &Supervisor{cfg: Config{Interval: 5 * time.Minute}}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 30 * time.Minute, 30 * time.Minute}
	for i, w := range want {
		if got := s.backoff(int64(i + 1)); got != w {
			t.Errorf("backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
	short := &Supervisor{cfg: Config{Interval: 2 * time.Second}}
	if got := short.backoff(1); got != 2*time.Second {
		t.Errorf("short interval: backoff(1) = %s", got)
	}
	if got := short.backoff(20); got != 16*time.Second {
		t.Errorf("short interval: backoff(20) = %s, want 16s", got)
	}
}

// TestBusyIsRetriedSoonWithoutCountingAFailure.
func TestBusyIsRetriedSoonWithoutCountingAFailure(t *testing.T) {
	out := "Synchronisation is already in progress.\n"
	j := &fakeJoplin{script: answering(&out)}
	s, files, _ := newTestSupervisor(t, 5*time.Minute, j)
	step(t, s, 0)
	st, _ := readStatus(t, files)
	if st.ConsecutiveFailures != 0 || st.LastError != nil || !st.NextSyncAt.Equal(t0.Add(busyRetry)) {
		t.Fatalf("status: %+v", st)
	}
	out = syncOK
	step(t, s, busyRetry)
	if j.syncs() != 2 {
		t.Fatal("no retry after busy")
	}
}

// TestConfigErrorKeepsServingAndNeverSyncs: a configuration problem is in
// the status (state, code, setting) and no sync runs; the E2EE password
// is still applied and Joplin's schedule is off.
func TestConfigErrorKeepsServingAndNeverSyncs(t *testing.T) {
	cfg, cfgErr := LoadConfig(env{envTarget: "webdav", envUser: "u"}.get, secretsDir(t, map[string]string{secretPassword: "pw"}))
	var imported map[string]any
	j := &fakeJoplin{script: func(line string) joplinbatch.Result {
		if path, ok := strings.CutPrefix(line, "config --import-file "); ok {
			b, _ := os.ReadFile(path)
			json.Unmarshal(b, &imported)
		}
		return joplinbatch.Result{}
	}}
	files := StatusFile{Dir: t.TempDir()}
	var log bytes.Buffer
	s := NewSupervisor(cfg, cfgErr, j, files, ProfileLog{}, &log)
	s.Starting(t0)
	if err := s.Configure(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	s.Started(t0)
	request(t, files, time.Second)
	for _, d := range []time.Duration{0, time.Second, time.Minute, time.Hour} {
		step(t, s, d)
	}
	if j.syncs() != 0 {
		t.Fatalf("synced %d times with a configuration error", j.syncs())
	}
	st, _ := readStatus(t, files)
	if st.State != StateConfigError || st.LastError == nil || st.LastError.Code != CodeConfig || st.LastError.Setting != envURL {
		t.Fatalf("status: %+v %+v", st, st.LastError)
	}
	if _, ok := imported["sync.target"]; ok || imported["sync.interval"] != float64(0) {
		t.Errorf("imported %v, want only sync.interval", imported)
	}
	if !strings.Contains(log.String(), "configuration error: "+envURL) {
		t.Errorf("log: %s", log.String())
	}
}

// TestNoTargetIsDisabled.
func TestNoTargetIsDisabled(t *testing.T) {
	j := &fakeJoplin{script: func(string) joplinbatch.Result { return joplinbatch.Result{} }}
	files := StatusFile{Dir: t.TempDir()}
	s := NewSupervisor(Config{Target: TargetNone, Interval: time.Minute}, nil, j, files, ProfileLog{}, &bytes.Buffer{})
	s.Started(t0)
	step(t, s, time.Hour)
	st, _ := readStatus(t, files)
	if st.State != StateDisabled || j.syncs() != 0 || st.Target != TargetNone {
		t.Fatalf("status %+v, %d syncs", st, j.syncs())
	}
}

// TestE2EEDecryptsAfterSyncAndReportsAWrongPassword: with encryption on,
// each successful sync is followed by a decrypt; a decrypt that asks for
// the password is E2EE_WRONG_PASSWORD; a right one reports password_ok.
func TestE2EEDecryptsAfterSyncAndReportsAWrongPassword(t *testing.T) {
	decrypt := joplinbatch.Result{Output: "Starting decryption...\nOperation cancelled\n", Asked: []string{"Enter master password:"}}
	j := &fakeJoplin{script: func(line string) joplinbatch.Result {
		switch line {
		case "sync":
			return joplinbatch.Result{Output: syncOK}
		case "e2ee status":
			return joplinbatch.Result{Output: "Encryption is: Enabled\n"}
		case decryptCommand:
			return decrypt
		}
		return joplinbatch.Result{}
	}}
	s, files, _ := newTestSupervisor(t, time.Minute, j)
	step(t, s, 0)
	st, raw := readStatus(t, files)
	if st.State != StateError || st.LastError == nil || st.LastError.Code != CodeE2EEWrongPassword || st.LastError.Setting != secretMaster {
		t.Fatalf("status: %+v %+v", st, st.LastError)
	}
	e := raw["e2ee"].(map[string]any)
	if e["enabled"] != true || e["master_password_set"] != true || e["password_ok"] != false || e["items_encrypted"] != nil {
		t.Errorf("e2ee = %v", e)
	}
	decrypt = joplinbatch.Result{Output: "Decrypted items: 4\nCompleted decryption.\n"}
	step(t, s, time.Minute)
	st, raw = readStatus(t, files)
	e = raw["e2ee"].(map[string]any)
	if st.State != StateIdle || st.LastError != nil || e["password_ok"] != true || e["items_encrypted"] != float64(0) {
		t.Errorf("after the right password: %+v e2ee=%v", st, e)
	}
}

// TestNeedsAuthorizationForDropbox: an interactive target without an
// authorisation is never synced (Joplin would wait for a code) and says
// how to authorise.
func TestNeedsAuthorizationForDropbox(t *testing.T) {
	cfg, err := LoadConfig(env{envTarget: "dropbox"}.get, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := &fakeJoplin{script: func(line string) joplinbatch.Result {
		if line == "config sync.7.auth" {
			return joplinbatch.Result{Output: "sync.7.auth = \n"}
		}
		return joplinbatch.Result{}
	}}
	files := StatusFile{Dir: t.TempDir()}
	s := NewSupervisor(cfg, nil, j, files, ProfileLog{}, &bytes.Buffer{})
	s.Started(t0)
	step(t, s, 0)
	step(t, s, time.Hour)
	st, _ := readStatus(t, files)
	if j.syncs() != 0 || st.State != StateNeedsAuthorization || st.LastError.Code != CodeNeedsAuthorization ||
		!strings.Contains(st.LastError.Message, "authorize-sync") {
		t.Fatalf("%d syncs, status %+v %+v", j.syncs(), st, st.LastError)
	}
}

// TestCompletedSyncsSurviveARestart: the count and the last success are
// read back from the previous status.json.
func TestCompletedSyncsSurviveARestart(t *testing.T) {
	out := syncOK
	j := &fakeJoplin{script: answering(&out)}
	s, files, _ := newTestSupervisor(t, time.Minute, j)
	step(t, s, 0)
	step(t, s, time.Minute)
	again := NewSupervisor(s.cfg, nil, j, files, ProfileLog{}, &bytes.Buffer{})
	again.Starting(t0.Add(time.Hour))
	st, _ := readStatus(t, files)
	if st.CompletedSyncs != 2 || st.LastSuccessAt == nil || st.State != StateStarting {
		t.Fatalf("after a restart: %+v", st)
	}
}

// TestStatusNeverHoldsSecrets: an error text that echoes the password is
// redacted in the status and the log.
func TestStatusNeverHoldsSecrets(t *testing.T) {
	out := syncFailed("401 Unauthorized for user u with password s3cr3t-pw")
	j := &fakeJoplin{script: answering(&out)}
	s, files, log := newTestSupervisor(t, time.Minute, j)
	step(t, s, 0)
	b, _ := os.ReadFile(filepath.Join(files.Dir, statusName))
	if bytes.Contains(b, []byte("s3cr3t")) || strings.Contains(log.String(), "s3cr3t") {
		t.Fatalf("a secret leaked:\n%s\n%s", b, log)
	}
	st, err := os.Stat(filepath.Join(files.Dir, statusName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("status.json mode %v, %v", st.Mode(), err)
	}
}

// TestIntervalCountsFromTheSyncStart: a sync that takes 3 s is followed by
// the next one an interval after it started; one that takes longer than
// the interval by the next at once.
func TestIntervalCountsFromTheSyncStart(t *testing.T) {
	out := syncOK
	j := &fakeJoplin{script: answering(&out)}
	s, files, _ := newTestSupervisor(t, time.Minute, j)
	took := 3 * time.Second
	var started time.Time
	s.now = func() time.Time { return started.Add(took) }
	started = t0
	step(t, s, 0)
	if st, _ := readStatus(t, files); !st.NextSyncAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("next sync at %s, want an interval after the start", st.NextSyncAt)
	}
	took = 2 * time.Minute
	started = t0.Add(time.Minute)
	step(t, s, time.Minute)
	if st, _ := readStatus(t, files); !st.NextSyncAt.Equal(started.Add(took)) {
		t.Fatalf("next sync at %s, want at once after the long sync (%s)", st.NextSyncAt, started.Add(took))
	}
}

// TestAuthValueSet reads `config sync.N.auth` as Joplin 3.5.1 prints it.
func TestAuthValueSet(t *testing.T) {
	for out, want := range map[string]bool{
		"sync.7.auth = \n":                   false,
		"sync.7.auth = null\n":               false,
		"sync.7.auth = abc\n":                true,
		"sync.7.auth = {\"access_token\":1}": true,
	} {
		if got := authValueSet(out, "sync.7.auth"); got != want {
			t.Errorf("%q: %v, want %v", out, got, want)
		}
	}
}

// TestE2EEWithoutAPasswordOrWithAWrongOne: an encrypted target without a
// master password is E2EE_PASSWORD_MISSING; Joplin's refusal to upload what
// it cannot encrypt is E2EE_PASSWORD_MISSING without a password and
// E2EE_WRONG_PASSWORD with one, each naming the secret.
func TestE2EEWithoutAPasswordOrWithAWrongOne(t *testing.T) {
	cantEncrypt := syncFailed("Error: Could not encrypt item 0417c8: Master key is not loaded: 997d15")
	cases := []struct {
		name, master, out, code string
	}{
		{"no password, encrypted items arrive", "", syncPasswordNeeded, CodeE2EEPasswordMiss},
		{"no password, upload refused", "", cantEncrypt, CodeE2EEPasswordMiss},
		{"wrong password, upload refused", "wrong", cantEncrypt, CodeE2EEWrongPassword},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			secrets := map[string]string{secretPassword: "pw"}
			if tc.master != "" {
				secrets[secretMaster] = tc.master
			}
			cfg, err := LoadConfig(env{envTarget: "webdav", envURL: "http://dav/j", envUser: "u"}.get, secretsDir(t, secrets))
			if err != nil {
				t.Fatal(err)
			}
			out := tc.out
			j := &fakeJoplin{script: func(line string) joplinbatch.Result {
				if line == "e2ee status" {
					return joplinbatch.Result{Output: "Encryption is: Enabled\n"}
				}
				return answering(&out)(line)
			}}
			files := StatusFile{Dir: t.TempDir()}
			s := NewSupervisor(cfg, nil, j, files, ProfileLog{}, &bytes.Buffer{})
			s.Started(t0)
			step(t, s, 0)
			st, _ := readStatus(t, files)
			if st.State != StateError || st.LastError == nil || st.LastError.Code != tc.code || st.LastError.Setting != secretMaster {
				t.Fatalf("status %+v %+v, want %s on %s", st, st.LastError, tc.code, secretMaster)
			}
		})
	}
}

// TestRefusedSettingsAreAConfigError: settings Joplin does not accept are
// a configuration error in the status, not an exit: the Data API still
// starts and nothing syncs.
func TestRefusedSettingsAreAConfigError(t *testing.T) {
	j := &fakeJoplin{script: func(line string) joplinbatch.Result {
		if strings.HasPrefix(line, "config --import-file ") {
			return joplinbatch.Result{Output: "Invalid value for sync.8.region\n"}
		}
		return joplinbatch.Result{}
	}}
	s, files, _ := newTestSupervisor(t, time.Minute, j)
	step(t, s, time.Hour)
	st, _ := readStatus(t, files)
	if j.syncs() != 0 || st.State != StateConfigError || st.LastError == nil || st.LastError.Code != CodeConfig ||
		!strings.Contains(st.LastError.Message, "Invalid value") {
		t.Fatalf("%d syncs, status %+v %+v", j.syncs(), st, st.LastError)
	}
}
