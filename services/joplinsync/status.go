package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
)

// States of the sync supervisor, as status.json reports them: the ones
// the bridge's reader knows.
const (
	StateDisabled           = syncstate.StateDisabled
	StateStarting           = syncstate.StateStarting
	StateIdle               = syncstate.StateIdle
	StateSyncing            = syncstate.StateSyncing
	StateError              = syncstate.StateError
	StateConfigError        = syncstate.StateConfigError
	StateNeedsAuthorization = syncstate.StateNeedsAuthorization
)

// Error codes of last_error (the agreed sync interface).
const (
	CodeAuthFailed         = "SYNC_AUTH_FAILED"
	CodeUnreachable        = "SYNC_UNREACHABLE"
	CodeBadURL             = "SYNC_BAD_URL"
	CodeConfig             = "SYNC_CONFIG"
	CodeNeedsAuthorization = "SYNC_NEEDS_AUTHORIZATION"
	CodeE2EEWrongPassword  = "E2EE_WRONG_PASSWORD"
	CodeE2EEPasswordMiss   = "E2EE_PASSWORD_MISSING"
	CodeFailed             = "SYNC_FAILED"
)

// Status is /sync/status.json (schema 1): one definition, in the package
// whose reader the bridge uses.
type (
	Status     = syncstate.Status
	SyncError  = syncstate.Error
	E2EEStatus = syncstate.E2EE
)

// StatusFile writes status.json in the sync state directory.
type StatusFile struct {
	Dir string
}

// statusName is the status file's name in the state directory.
const statusName = syncstate.StatusFile

// Write replaces status.json atomically (0600, temporary file, fsync,
// rename).
func (f StatusFile) Write(s Status) error {
	return syncstate.WriteStatus(f.Dir, s)
}

// Previous reads the status an earlier run left, so the count of completed
// syncs and the last success survive a restart. A missing or unreadable
// file gives the zero Status.
func (f StatusFile) Previous() Status {
	var s Status
	b, err := os.ReadFile(filepath.Join(f.Dir, statusName))
	if err != nil || json.Unmarshal(b, &s) != nil || s.Schema != syncstate.Schema {
		return Status{}
	}
	return s
}

// Prepare makes the state directory private (0700), creating it when
// missing.
func (f StatusFile) Prepare() error {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return fmt.Errorf("create sync state dir: %w", err)
	}
	if err := os.Chmod(f.Dir, 0o700); err != nil {
		return fmt.Errorf("sync state dir %s: %w", f.Dir, err)
	}
	return nil
}

// requestName is the file the bridge touches after each write it makes.
const requestName = syncstate.RequestFile

// RequestStamp is the modification time of the bridge's request file (the
// zero time when there is none).
func (f StatusFile) RequestStamp() time.Time {
	st, err := os.Stat(filepath.Join(f.Dir, requestName))
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}
