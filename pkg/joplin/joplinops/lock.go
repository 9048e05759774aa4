package joplinops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/notebridge/notebridge/pkg/internal/filelock"
)

// WithCreateLockDir serialises duplicate-checked writes (preflight and
// write) across every process on the machine that uses dir and talks to the
// same Joplin, with an advisory lock file in dir named after a hash of the
// Joplin endpoint (LockFile). Pass the state directory.
func WithCreateLockDir(dir string) Option {
	return func(o *Ops) { o.lockPath = LockFile(dir, o.c.Endpoint()) }
}

// LockFile is the lock file in dir for the Joplin at endpoint (a
// normalised base URL, see joplin.Client.Endpoint).
func LockFile(dir, endpoint string) string {
	sum := sha256.Sum256([]byte(endpoint))
	return filepath.Join(dir, "locks", "joplin-"+hex.EncodeToString(sum[:16])+".lock")
}

// lockCreates waits, as long as ctx allows, for the right to run a
// duplicate preflight and the write that follows: first within the process,
// then, with a lock file, across processes. unlock gives it back. A lock
// file that cannot be used fails the call (fail closed): the error, which
// names the path, is for the log, not for clients.
func (o *Ops) lockCreates(ctx context.Context) (unlock func(), err error) {
	select {
	case o.createSlot <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("joplinops: waiting for the create lock: %w", ctx.Err())
	}
	if o.lockPath == "" {
		return func() { <-o.createSlot }, nil
	}
	release, err := filelock.Lock(ctx, o.lockPath)
	if err != nil {
		<-o.createSlot
		return nil, fmt.Errorf("joplinops: cross-process create lock: %w", err)
	}
	return func() { release(); <-o.createSlot }, nil
}
