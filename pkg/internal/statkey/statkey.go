//go:build unix

// Package statkey identifies one version of a file by its stat, the way
// git's index does: a write changes at least one field (ctime moves on every
// write, chmod and relink, and cannot be set back by a user). Caches keyed
// by it must not trust a file changed within a racy window, since a rewrite
// within one timestamp tick could leave the key unchanged.
package statkey

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Key is one version of a file. The zero Key stands for no file.
type Key struct {
	Dev, Ino         uint64
	Size             int64
	MtimeNs, CtimeNs int64
}

// Of returns the key of a stat.
func Of(st *unix.Stat_t) Key {
	return Key{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano()}
}

// OfInfo returns the key of an os.Stat or os.Lstat result, and the zero Key
// when err is set or the result carries no unix stat.
func OfInfo(fi os.FileInfo, err error) Key {
	if err != nil {
		return Key{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Key{}
	}
	return Key{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano()}
}

// Racy reports whether the file changed less than window before now (or
// after it): such a key may not tell a later rewrite apart.
func (k Key) Racy(now time.Time, window time.Duration) bool {
	n, w := now.UnixNano(), int64(window)
	return n-k.MtimeNs < w || n-k.CtimeNs < w
}
