// Package store is the transactional, crash-safe writer for one OKF bundle.
// Its private state lives in the bundle's .okf/ directory: a lease file for
// flock, staged payloads, the commit journal and durable receipts. A commit
// is compare-and-swap on the bundle revision; once the journal is durable
// (the point of no return) the commit always completes, here or in the
// recovery that runs when a writer next opens the store.
package store

import (
	"context"
	"errors"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/internal/filelock"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"golang.org/x/sys/unix"
)

// Paths inside the bundle used by the store.
const (
	Dir         = ".okf"
	lockPath    = Dir + "/lock"
	journalPath = Dir + "/journal"
	stageDir    = Dir + "/stage"
	receiptDir  = Dir + "/receipts"
)

// Options configure a Store.
type Options struct {
	Limits Limits
	// Retention bounds how many receipts are kept (oldest go first).
	Retention int
	// Hook, when set, is called at each commit step (see Steps). Tests use it
	// to inject faults; a returned error aborts the commit at that step.
	Hook func(step string) error
	// Cache is the manifest cache whose digests the revision reuses
	// (nil: filecache.Default). It is never the authority: see plan.
	Cache *filecache.Cache
}

// DefaultRetention keeps the last 1,000 receipts.
const DefaultRetention = 1000

// Store commits changes to one bundle.
type Store struct {
	root *safefs.Root
	opt  Options
}

// New wraps an open bundle root. It touches nothing on disk.
func New(root *safefs.Root, opt Options) *Store {
	if opt.Limits == (Limits{}) {
		opt.Limits = DefaultLimits
	}
	if opt.Cache == nil {
		opt.Cache = filecache.Default
	}
	if opt.Retention <= 0 {
		opt.Retention = DefaultRetention
	}
	return &Store{root: root, opt: opt}
}

// Root returns the bundle root the store writes.
func (s *Store) Root() *safefs.Root { return s.root }

// Lease is a held flock on .okf/lock.
type Lease struct{ fd int }

// Release drops the lease.
func (l *Lease) Release() {
	if l != nil && l.fd >= 0 {
		filelock.Unlock(l.fd)
		l.fd = -1
	}
}

// LockExclusive creates .okf/ when needed and takes the exclusive lease,
// waiting until ctx ends. Commit and recovery run under it.
func (s *Store) LockExclusive(ctx context.Context) (*Lease, error) {
	if err := s.root.MkdirAll(Dir); err != nil {
		return nil, err
	}
	fd, err := openLock(s.root, true)
	if err != nil {
		return nil, err
	}
	return flockWait(ctx, fd, unix.LOCK_EX)
}

// openLock opens .okf/lock (creating it when create is set) and returns a
// descriptor the lease owns.
func openLock(root *safefs.Root, create bool) (int, error) {
	f, err := root.OpenLockFile(lockPath, create)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return -1, &safefs.PathError{Code: safefs.CodeIO, Rel: lockPath, Err: err}
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// LockShared takes the shared lease that readers hold. It writes nothing:
// without an existing .okf/lock there is no writer to exclude, so it
// returns a nil lease.
func LockShared(ctx context.Context, root *safefs.Root) (*Lease, error) {
	fd, err := openLock(root, false)
	if err != nil {
		if safefs.IsCode(err, safefs.CodeNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return flockWait(ctx, fd, unix.LOCK_SH)
}

// flockWait takes the lease of kind how on fd (which it owns from now on),
// waiting until ctx ends.
func flockWait(ctx context.Context, fd, how int) (*Lease, error) {
	if err := filelock.Flock(ctx, fd, how); err != nil {
		if ctx.Err() != nil {
			return nil, domainerr.Retryable(domainerr.Busy, "another writer holds the bundle lease; nothing was written")
		}
		return nil, &safefs.PathError{Code: safefs.CodeIO, Rel: lockPath, Err: err}
	}
	return &Lease{fd: fd}, nil
}

// JournalPending reports whether an interrupted commit awaits recovery. It
// writes nothing.
func JournalPending(root *safefs.Root) (bool, error) {
	_, err := root.Lstat(journalPath)
	if err == nil {
		return true, nil
	}
	if safefs.IsCode(err, safefs.CodeNotFound) {
		return false, nil
	}
	return false, err
}

func (s *Store) step(name string) error {
	if s.opt.Hook == nil {
		return nil
	}
	if err := s.opt.Hook(name); err != nil {
		return errors.Join(errInjected, err)
	}
	return nil
}

// errInjected marks a failure injected by a test hook.
var errInjected = errors.New("injected fault")
