//go:build unix

// Package filelock takes advisory locks (flock) on files, so that processes
// on one machine can serialise a critical section. Waiting honours a
// context. The kernel releases a lock when its holder exits, however it
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
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("filelock: open: %w", err)
	}
	if err := Flock(ctx, fd, unix.LOCK_EX); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("filelock: lock: %w", err)
	}
	return func() { Unlock(fd) }, nil
}

// Flock takes a lock of kind how (unix.LOCK_EX or unix.LOCK_SH) on fd,
// waiting until it is free or ctx is done. On success the caller holds the
// lock and owns fd; Unlock gives both back. On failure fd is closed: at once,
// or, when ctx ended the wait, as soon as the pending flock returns, so
// that whatever it took is given back; the error is then ctx's.
func Flock(ctx context.Context, fd, how int) error {
	err := flock(fd, how|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		unix.Close(fd)
		return err
	}
	// Held elsewhere: wait in a blocking flock on its own goroutine, so the
	// lock is taken the moment it is free and ctx can still end the wait.
	got := make(chan error, 1)
	go func() { got <- flock(fd, how) }()
	select {
	case err := <-got:
		if err != nil {
			unix.Close(fd)
		}
		return err
	case <-ctx.Done():
		// The waiter cannot be interrupted: let it finish, then give back
		// whatever it took.
		go func() {
			<-got
			Unlock(fd)
		}()
		return ctx.Err()
	}
}

// Unlock releases a lock taken by Flock and closes its descriptor.
func Unlock(fd int) {
	_ = unix.Flock(fd, unix.LOCK_UN)
	_ = unix.Close(fd)
}

// flock calls flock(2), retrying when a signal interrupts it.
func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
