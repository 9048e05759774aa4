//go:build unix

// Package filelock takes exclusive advisory locks (flock) on files, so that
// processes on one machine can serialise a critical section. Waiting honours
// a context. The kernel releases a lock when its holder exits, however it
// exits, so a crashed process never leaves a stale lock.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive lock on the file at path, creating it (mode 0600)
// and its directory (mode 0700) when needed. It waits until the lock is free
// or ctx is done, in which case it returns ctx's error. release gives the
// lock back; it must be called exactly once.
func Lock(ctx context.Context, path string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("filelock: create directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("filelock: open: %w", err)
	}
	unlock := func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		_ = f.Close()
	}
	err = flock(f, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return unlock, nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("filelock: lock: %w", err)
	}
	// Held elsewhere: wait in a blocking flock on its own goroutine, so the
	// lock is taken the moment it is free and ctx can still end the wait.
	got := make(chan error, 1)
	go func() { got <- flock(f, unix.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("filelock: lock: %w", err)
		}
		return unlock, nil
	case <-ctx.Done():
		// The waiter cannot be interrupted: let it finish, then give back
		// whatever it took.
		go func() {
			if <-got == nil {
				unlock()
				return
			}
			f.Close()
		}()
		return nil, ctx.Err()
	}
}

// flock calls flock(2), retrying when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
