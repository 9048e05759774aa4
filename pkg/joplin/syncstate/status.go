// Package syncstate is the bridge's side of the sync interface shared with
// the Joplin container (a directory both mount, /sync in compose): it reads
// the sync supervisor's status.json and writes the request file that asks
// for a sync soon after notebridge writes to Joplin.
package syncstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// StatusFile and RequestFile are the interface's two files.
const (
	StatusFile  = "status.json"
	RequestFile = "request"
)

// Schema is the version of the status file this package reads and writes.
const Schema = 1

// maxStatusBytes bounds the status file read: the supervisor writes well
// under a kilobyte.
const maxStatusBytes = 64 << 10

// Status is status.json, schema 1. Unknown fields are ignored.
type Status struct {
	Schema              int        `json:"schema"`
	Target              string     `json:"target"`
	State               string     `json:"state"`
	IntervalSeconds     int64      `json:"interval_seconds"`
	CompletedSyncs      int64      `json:"completed_syncs"`
	LastAttemptAt       *time.Time `json:"last_attempt_at"`
	LastSuccessAt       *time.Time `json:"last_success_at"`
	NextSyncAt          *time.Time `json:"next_sync_at"`
	ConsecutiveFailures int64      `json:"consecutive_failures"`
	LastError           *Error     `json:"last_error"`
	E2EE                *E2EE      `json:"e2ee"`
	UpdatedAt           *time.Time `json:"updated_at"`
}

// Error is the last sync failure as the supervisor reports it: a stable
// code, the setting to fix and a message without secrets.
type Error struct {
	Code    string     `json:"code"`
	Setting string     `json:"setting,omitempty"`
	Message string     `json:"message"`
	At      *time.Time `json:"at,omitempty"`
}

// E2EE is the end-to-end encryption state.
type E2EE struct {
	Enabled           bool   `json:"enabled"`
	MasterPasswordSet bool   `json:"master_password_set"`
	PasswordOK        *bool  `json:"password_ok"`
	ItemsEncrypted    *int64 `json:"items_encrypted"`
}

// ErrNotConfigured means there is no sync state to read: no directory is
// configured, or the supervisor has not written its status yet.
var ErrNotConfigured = errors.New("sync is not configured")

// Reader reads status.json, parsing it again only when its size or
// modification time changed, so it can be asked on every call.
type Reader struct {
	path string

	mu    sync.Mutex
	have  bool // st and err hold the file read at stamp
	stamp stamp
	st    Status
	err   error
}

type stamp struct {
	size int64
	mod  time.Time
}

// NewReader returns a Reader of the status in dir; an empty dir means
// sync is not configured.
func NewReader(dir string) *Reader {
	if dir == "" {
		return &Reader{}
	}
	return &Reader{path: filepath.Join(dir, StatusFile)}
}

// Configured reports whether a sync state directory is set.
func (r *Reader) Configured() bool { return r != nil && r.path != "" }

// Read returns the current status. ErrNotConfigured: no directory or no
// file yet. Any other error is a file that cannot be read or parsed (the
// caller reports it as an unknown state, never as its own failure).
func (r *Reader) Read() (Status, error) {
	if !r.Configured() {
		return Status{}, ErrNotConfigured
	}
	fi, err := os.Stat(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return Status{}, ErrNotConfigured
	}
	if err != nil {
		return Status{}, fmt.Errorf("sync status: %w", errors.Unwrap(err))
	}
	s := stamp{size: fi.Size(), mod: fi.ModTime()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.have && s == r.stamp {
		return r.st, r.err
	}
	r.st, r.err = parseFile(r.path)
	r.stamp, r.have = s, true
	return r.st, r.err
}

// Generation returns completed_syncs, which the supervisor increments
// after every successful sync; ok is false when it is not known.
func (r *Reader) Generation() (n int64, ok bool) {
	st, err := r.Read()
	if err != nil {
		return 0, false
	}
	return st.CompletedSyncs, true
}

func parseFile(path string) (Status, error) {
	f, err := os.Open(path)
	if err != nil {
		return Status{}, fmt.Errorf("sync status: %w", errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStatusBytes+1))
	if err != nil {
		return Status{}, fmt.Errorf("sync status: read: %w", err)
	}
	if len(b) > maxStatusBytes {
		return Status{}, fmt.Errorf("sync status: %s is larger than %d bytes", StatusFile, maxStatusBytes)
	}
	return Parse(b)
}

// Parse decodes status.json. A file of another schema, without a state or
// with a state this reader does not know is an error.
func Parse(b []byte) (Status, error) {
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		return Status{}, fmt.Errorf("sync status: %s is not valid JSON", StatusFile)
	}
	if st.Schema != Schema {
		return Status{}, fmt.Errorf("sync status: %s has schema %d; this notebridge reads schema %d", StatusFile, st.Schema, Schema)
	}
	if !knownStates[st.State] {
		return Status{}, fmt.Errorf("sync status: %s has an unknown state %.40q", StatusFile, st.State)
	}
	return st, nil
}

// States the supervisor reports in status.json.
const (
	StateDisabled           = "disabled"
	StateStarting           = "starting"
	StateIdle               = "idle"
	StateSyncing            = "syncing"
	StateError              = "error"
	StateConfigError        = "config_error"
	StateNeedsAuthorization = "needs_authorization"
)

var knownStates = map[string]bool{
	StateDisabled: true, StateStarting: true, StateIdle: true, StateSyncing: true,
	StateError: true, StateConfigError: true, StateNeedsAuthorization: true,
}
