package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/joplinbatch"
)

// decryptCommand decrypts what a sync brought; --force makes a master key
// that cannot be loaded an error instead of a password question.
const decryptCommand = "e2ee decrypt --force --retry-failed-items"

// Joplin runs one command in the long-lived Joplin process (a
// *joplinbatch.Batch).
type Joplin interface {
	Run(ctx context.Context, line string) (joplinbatch.Result, error)
}

// Scheduling constants.
const (
	// requestDebounce: a sync runs this long after the last request the
	// bridge made (a burst of writes gives one sync) ...
	requestDebounce = 10 * time.Second
	// requestMaxWait: ... but no later than this after the first request
	// of a burst that never pauses.
	requestMaxWait = 60 * time.Second
	// busyRetry: Joplin said a sync was already running; try again after.
	busyRetry = 5 * time.Second
	// syncTimeout bounds one sync (a first sync of a large account may take
	// minutes); past it the Joplin process is considered stuck.
	syncTimeout = 30 * time.Minute
	// commandTimeout bounds the small commands (config, e2ee status).
	commandTimeout = 2 * time.Minute
	// decryptTimeout bounds `e2ee decrypt` (1,901 items took 18.5 s here).
	decryptTimeout = 30 * time.Minute
	// backoffBase and backoffMax bound the retry delay after failures; both
	// shrink with a short interval (tests use seconds).
	backoffBase = 30 * time.Second
	backoffMax  = 30 * time.Minute
)

// Supervisor schedules the syncs of the bundled Joplin and reports them in
// status.json. Its methods are called from one goroutine.
type Supervisor struct {
	cfg    Config
	cfgErr *Problem
	joplin Joplin
	files  StatusFile
	plog   ProfileLog
	logw   io.Writer
	// now reads the clock after a command finished (nil: the time the
	// step began, which is what the tests' fixed clock wants).
	now func() time.Time

	status Status
	// nextAt is when the next sync is due (the interval after a success,
	// the backoff after a failure).
	nextAt time.Time
	// lastStamp is the request file's time last seen; reqDue the debounced
	// time a request-triggered sync is due (zero: none pending), reqFirst
	// the first request of the pending burst.
	lastStamp, reqDue, reqFirst time.Time
}

// NewSupervisor makes a supervisor for a configuration (cfgErr: the
// problem LoadConfig found, or nil) and a profile's log.
func NewSupervisor(cfg Config, cfgErr error, joplin Joplin, files StatusFile, plog ProfileLog, logw io.Writer) *Supervisor {
	s := &Supervisor{cfg: cfg, joplin: joplin, files: files, plog: plog, logw: logw}
	if cfgErr != nil {
		var p *Problem
		if !errors.As(cfgErr, &p) {
			p = &Problem{CodeConfig, envTarget, cfgErr.Error()}
		}
		s.cfgErr = p
	}
	prev := files.Previous()
	s.status = Status{
		Target:          cfg.Target,
		State:           StateStarting,
		IntervalSeconds: int64(cfg.Interval / time.Second),
		CompletedSyncs:  prev.CompletedSyncs,
		LastSuccessAt:   prev.LastSuccessAt,
		E2EE:            &E2EEStatus{MasterPasswordSet: cfg.master != ""},
	}
	if prev.E2EE != nil {
		s.status.E2EE.Enabled = prev.E2EE.Enabled
	}
	return s
}

// logf writes one line to the log, secrets removed.
func (s *Supervisor) logf(format string, args ...any) {
	fmt.Fprintln(s.logw, "joplinsync: "+s.redact(fmt.Sprintf(format, args...)))
}

// redact replaces every configured secret in text.
func (s *Supervisor) redact(text string) string {
	for _, secret := range s.cfg.Secrets() {
		text = strings.ReplaceAll(text, secret, "[secret]")
	}
	return text
}

// Starting records the state before the Joplin process is up.
func (s *Supervisor) Starting(now time.Time) {
	s.lastStamp = s.files.RequestStamp()
	s.write(now)
}

// Configure imports the sync settings into the profile through the Joplin
// process (before the Data API starts, so no other writer races it). A
// configuration problem, or settings Joplin refuses, is reported, not
// returned: the Data API must still start. The error is the Joplin
// process failing.
func (s *Supervisor) Configure(ctx context.Context, now time.Time) error {
	settings := s.cfg.JoplinSettings()
	if s.cfgErr != nil {
		// Sync nothing with a half-valid configuration; only Joplin's own
		// schedule off and the E2EE password when it was read.
		settings = map[string]any{"sync.interval": 0}
		if s.cfg.master != "" {
			settings["encryption.masterPassword"] = s.cfg.master
		}
	} else {
		s.logf("configuration: %s", s.cfg)
	}
	refused, err := s.importSettings(ctx, settings)
	if err != nil {
		return err
	}
	if refused != "" && s.cfgErr == nil {
		s.cfgErr = &Problem{CodeConfig, envTarget, "Joplin refused the sync settings: " + refused}
	}
	if s.cfgErr != nil {
		s.logf("configuration error: %s (fix the setting, then: docker compose up -d)", s.cfgErr.Error())
		s.setError(now, s.cfgErr)
		s.status.State = StateConfigError
	}
	return nil
}

// importSettings imports settings into the profile with `config
// --import-file` from a private temporary file, removed at once. refused
// is what Joplin answered when it did not accept them (a successful import
// prints nothing).
func (s *Supervisor) importSettings(ctx context.Context, settings map[string]any) (refused string, err error) {
	path, err := writeSettingsFile(settings)
	if err != nil {
		return "", err
	}
	defer os.Remove(path)
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	res, err := s.joplin.Run(ctx, "config --import-file "+path)
	if err != nil {
		return "", fmt.Errorf("import settings: %w", err)
	}
	return shorten(s.redact(strings.TrimSpace(res.Output))), nil
}

// writeSettingsFile writes settings as JSON to a new 0600 temporary file
// and returns its path, which has no spaces or quotes (it goes on a batch
// command line).
func writeSettingsFile(settings map[string]any) (string, error) {
	b, err := json.Marshal(settings)
	if err != nil {
		return "", fmt.Errorf("encode settings: %w", err)
	}
	f, err := os.CreateTemp("", "joplinsync-settings-*.json") // 0600
	if err != nil {
		return "", fmt.Errorf("settings file: %w", err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil && strings.ContainsAny(f.Name(), " \"'") {
		werr = errors.New("the temporary directory's path must not contain spaces or quotes")
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("settings file: %w", werr)
	}
	return f.Name(), nil
}

// Started records that the Data API is up and schedules the first sync.
func (s *Supervisor) Started(now time.Time) {
	switch {
	case s.cfgErr != nil:
		s.status.State = StateConfigError
	case s.cfg.Target == TargetNone:
		s.status.State = StateDisabled
		s.logf("no sync target configured (%s=none): the bundled Joplin keeps its notes to itself", envTarget)
	default:
		s.status.State = StateIdle
		s.nextAt = now
	}
	s.write(now)
}

// active reports whether syncs are scheduled at all.
func (s *Supervisor) active() bool {
	return s.cfgErr == nil && s.cfg.Target != TargetNone && s.status.State != StateNeedsAuthorization
}

// Step is one turn of the loop at time now: notice a new request from the
// bridge, and sync when one is due. It returns an error only when the
// Joplin process is gone.
func (s *Supervisor) Step(ctx context.Context, now time.Time) error {
	if stamp := s.files.RequestStamp(); !stamp.Equal(s.lastStamp) {
		s.lastStamp = stamp
		if s.reqFirst.IsZero() {
			s.reqFirst = now
		}
		s.reqDue = now.Add(requestDebounce)
		if limit := s.reqFirst.Add(requestMaxWait); s.reqDue.After(limit) {
			s.reqDue = limit
		}
	}
	if !s.active() || !s.due(now) {
		return nil
	}
	return s.Sync(ctx, now)
}

// due reports whether a sync should start at now: the schedule says so, or
// a debounced request is ripe and no failure backoff is running.
func (s *Supervisor) due(now time.Time) bool {
	if !now.Before(s.nextAt) {
		return true
	}
	return !s.reqDue.IsZero() && !now.Before(s.reqDue) && s.status.ConsecutiveFailures == 0
}

// Sync runs one sync now and records its outcome; when E2EE is on it then
// decrypts what arrived.
func (s *Supervisor) Sync(ctx context.Context, now time.Time) error {
	s.reqDue, s.reqFirst = time.Time{}, time.Time{}
	s.status.State = StateSyncing
	at := now.UTC()
	s.status.LastAttemptAt = &at
	s.status.NextSyncAt = nil
	s.write(now)

	if targets[s.cfg.Target].interactive {
		authorised, err := s.authorised(ctx)
		if err != nil {
			return err
		}
		if !authorised {
			s.setError(now, notAuthenticated(s.cfg.Target))
			s.status.State = StateNeedsAuthorization
			s.logf("%s", s.status.LastError.Message)
			s.write(now)
			return nil
		}
	}
	mark := s.plog.Mark()
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	res, err := s.joplin.Run(sctx, "sync")
	cancel()
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	end := s.clockAfter(now)
	out := ClassifySync(s.cfg.Target, res.Output, s.plog.LastSyncError(mark))
	switch {
	case out.Busy:
		s.status.State = StateIdle
		s.schedule(end, min(busyRetry, s.cfg.Interval))
	case out.Err != nil:
		s.fail(end, s.e2eeCause(out.Err))
	default:
		s.succeed(now, end)
		if err := s.afterSuccess(ctx, end, out); err != nil {
			return err
		}
	}
	s.write(end)
	return nil
}

// clockAfter is the time a command that began at start finished.
func (s *Supervisor) clockAfter(start time.Time) time.Time {
	if s.now != nil {
		return s.now()
	}
	return start
}

// e2eeCause turns a sync failure caused by a master key Joplin cannot
// load into the E2EE code.
func (s *Supervisor) e2eeCause(p *Problem) *Problem {
	low := strings.ToLower(p.Message)
	if !strings.Contains(low, "master key") && !strings.Contains(low, "masterkeynotloaded") {
		return p
	}
	if s.cfg.master == "" {
		return errMasterPasswordMissing
	}
	return &Problem{CodeE2EEWrongPassword, secretMaster, "the master password does not unlock the sync target's key: " + p.Message}
}

// errMasterPasswordMissing: the sync target is encrypted and no master
// password is set.
var errMasterPasswordMissing = &Problem{CodeE2EEPasswordMiss, secretMaster, "the sync target is encrypted: set the master password with docker compose run --rm sync-secret " + secretMaster}

// succeed records a successful sync that ran from start to end. The next
// one starts an interval after this one started (at once if it took
// longer), so the interval is the time between two syncs.
func (s *Supervisor) succeed(start, end time.Time) {
	at := end.UTC()
	s.status.CompletedSyncs++
	s.status.LastSuccessAt = &at
	s.status.ConsecutiveFailures = 0
	s.status.LastError = nil
	s.status.State = StateIdle
	s.schedule(end, max(start.Add(s.cfg.Interval).Sub(end), 0))
}

// fail records a failed sync and backs off.
func (s *Supervisor) fail(now time.Time, p *Problem) {
	s.status.ConsecutiveFailures++
	s.setError(now, p)
	s.status.State = StateError
	delay := s.backoff(s.status.ConsecutiveFailures)
	s.schedule(now, delay)
	s.logf("sync failed (%d in a row; next try in %s): %s [%s]", s.status.ConsecutiveFailures, delay, p.Message, p.Setting)
}

// backoff is the delay before the next try after n consecutive failures:
// doubling from min(30 s, interval), capped at min(8 × interval, 30 min).
func (s *Supervisor) backoff(n int64) time.Duration {
	base := min(backoffBase, s.cfg.Interval)
	limit := max(base, min(8*s.cfg.Interval, backoffMax))
	d := base
	for i := int64(1); i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

func (s *Supervisor) schedule(now time.Time, after time.Duration) {
	s.nextAt = now.Add(after)
	next := s.nextAt.UTC()
	s.status.NextSyncAt = &next
}

func (s *Supervisor) setError(now time.Time, p *Problem) {
	at := now.UTC()
	s.status.LastError = &SyncError{Code: p.Code, Setting: p.Setting, Message: s.redact(p.Message), At: &at}
}

// afterSuccess checks E2EE after a successful sync: whether it is on, and
// decrypts what arrived (the CLI's sync never decrypts by itself).
func (s *Supervisor) afterSuccess(ctx context.Context, now time.Time, out Outcome) error {
	cctx, cancel := context.WithTimeout(ctx, commandTimeout)
	res, err := s.joplin.Run(cctx, "e2ee status")
	cancel()
	if err != nil {
		return fmt.Errorf("e2ee status: %w", err)
	}
	s.status.E2EE.Enabled = EncryptionEnabled(res.Output)
	s.status.E2EE.PasswordOK, s.status.E2EE.ItemsEncrypted = nil, nil
	if out.PasswordNeeded && s.cfg.master == "" {
		s.status.State = StateError
		s.setError(now, errMasterPasswordMissing)
		s.logf("%s", s.status.LastError.Message)
		return nil
	}
	if !s.status.E2EE.Enabled && !out.PasswordNeeded {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, decryptTimeout)
	res, err = s.joplin.Run(dctx, decryptCommand)
	cancel()
	if err != nil {
		return fmt.Errorf("e2ee decrypt: %w", err)
	}
	d := ClassifyDecrypt(res.Output, res.Asked)
	ok := !d.WrongPassword && s.cfg.master != ""
	if s.cfg.master != "" {
		s.status.E2EE.PasswordOK = &ok
	}
	if d.WrongPassword {
		s.status.State = StateError
		s.setError(now, &Problem{CodeE2EEWrongPassword, secretMaster, "the master password does not unlock the sync target's encryption key; set the right one with docker compose run --rm sync-secret " + secretMaster})
		s.logf("%s", s.status.LastError.Message)
		return nil
	}
	if d.Skipped >= 0 {
		n := int64(d.Skipped)
		s.status.E2EE.ItemsEncrypted = &n
	}
	return nil
}

// authorised reports whether Joplin holds an authorisation for an
// interactive target (sync.N.auth is set). The value never leaves this
// function.
func (s *Supervisor) authorised(ctx context.Context) (bool, error) {
	key := authKey(s.cfg.Target)
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	res, err := s.joplin.Run(ctx, "config "+key)
	if err != nil {
		return false, fmt.Errorf("config %s: %w", key, err)
	}
	return authValueSet(res.Output, key), nil
}

// authKey is the profile setting that holds an interactive target's
// authorisation (sync.N.auth).
func authKey(target string) string {
	return "sync." + strconv.Itoa(targets[target].id) + ".auth"
}

// authValueSet reads `config KEY`'s output ("KEY = value"): whether the
// authorisation holds a value.
func authValueSet(output, key string) bool {
	v := strings.TrimSpace(output)
	v = strings.TrimSpace(strings.TrimPrefix(v, key+" ="))
	return v != "" && v != `""` && v != "null"
}

// write saves the status, logging (not returning) a failure: the Data
// API keeps serving whether or not the bridge can see the status.
func (s *Supervisor) write(now time.Time) {
	at := now.UTC()
	s.status.UpdatedAt = &at
	if err := s.files.Write(s.status); err != nil {
		s.logf("cannot write %s: %v", filepath.Join(s.files.Dir, statusName), err)
	}
}

// Status returns the current status (for tests and the log).
func (s *Supervisor) Status() Status { return s.status }
