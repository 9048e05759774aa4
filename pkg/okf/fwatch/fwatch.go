// Package fwatch tells whether anything in a set of directories changed
// since the watch began, through one inotify instance read on demand. It
// lets the OKF manifest cache reuse a bundle's whole listing without a
// stat per file, and only where the kernel reports every change: local
// filesystems, not network or FUSE mounts, whose changes made elsewhere
// raise no event.
//
// Use: New for a bundle root, then AddDir on every directory of a walk
// before the walk reads it, then Changed before each reuse of what the walk
// found. A change that lands after AddDir is an event; one before it is
// seen by the walk itself. Changed drains the queue without blocking, so a
// change whose system call returned before Changed is always reported.
package fwatch

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// MaxDirs bounds the directories one Watch follows; a bundle with more is
// listed by stat as before.
const MaxDirs = 4096

// ErrUnsupported says the filesystem does not report every change.
var ErrUnsupported = errors.New("fwatch: filesystem does not report every change to inotify")

// ErrTooManyDirs says the walk met more than MaxDirs directories.
var ErrTooManyDirs = errors.New("fwatch: too many directories to watch")

// mask is every event that can change what a walk of the directory or a
// read of its files would find.
const mask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_ONLYDIR

// Local filesystems on which every change made on this machine raises an
// inotify event (magic numbers from statfs(2)).
var localFS = map[int64]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0xF2F52010: true, // f2fs
	0x2FC12FC1: true, // zfs
	0x794C7630: true, // overlayfs (changes made through the overlay)
}

// Supported reports whether the filesystem holding fd reports every change.
func Supported(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false
	}
	return localFS[int64(st.Type)]
}

// Watch is one inotify instance. It is safe for concurrent use.
type Watch struct {
	mu      sync.Mutex
	fd      int
	dirs    int
	changed bool
	broken  error
}

// New starts a watch for directories of the filesystem holding rootFD.
func New(rootFD int) (*Watch, error) {
	if !Supported(rootFD) {
		return nil, ErrUnsupported
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fwatch: inotify_init1: %w", err)
	}
	return &Watch{fd: fd}, nil
}

// AddDir follows the open directory dirFD. Call it before reading the
// directory. An error makes the watch unusable (Changed then reports true).
func (w *Watch) AddDir(dirFD int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return w.broken
	}
	if w.dirs >= MaxDirs {
		w.broken = ErrTooManyDirs
		return w.broken
	}
	// The descriptor's /proc link names exactly the directory already
	// opened, whatever happened to its path since.
	if _, err := unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(dirFD), mask); err != nil {
		w.broken = fmt.Errorf("fwatch: inotify_add_watch: %w", err)
		return w.broken
	}
	w.dirs++
	return nil
}

// Changed reports whether any watched directory or file in it changed
// since the watch began (or whether the watch cannot tell). Once true, it
// stays true.
func (w *Watch) Changed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed || w.broken != nil {
		return true
	}
	var buf [4096]byte
	// Any event, IN_Q_OVERFLOW and IN_IGNORED included, is a change; so is
	// a read that fails for any reason but an empty queue.
	if n, err := unix.Read(w.fd, buf[:]); n > 0 || err != unix.EAGAIN {
		w.changed = true
	}
	return w.changed
}

// Close releases the inotify instance; a closed watch reports a change.
func (w *Watch) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken == nil {
		w.broken = errors.New("fwatch: closed")
	}
	if w.fd < 0 {
		return nil
	}
	err := unix.Close(w.fd)
	w.fd = -1
	return err
}
