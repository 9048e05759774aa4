package httpauth

import (
	"crypto/sha256"
	"os"
	"syscall"
	"time"
)

// racyWindow: a file changed this recently is never trusted from the memo,
// since a rewrite within one timestamp tick would leave its stat unchanged.
const racyWindow = 2 * time.Second

// now and readFile are replaced by tests.
var (
	now      = time.Now
	readFile = os.ReadFile
)

// statKey identifies one version of a file: any rewrite, rename over it,
// chmod or relink changes at least one field.
type statKey struct {
	dev, ino, size, mode uint64
	mtimeNs, ctimeNs     int64
	missing              bool
}

func keyOf(fi os.FileInfo, err error) statKey {
	if err != nil {
		return statKey{missing: true}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{missing: true}
	}
	return statKey{
		dev: st.Dev, ino: st.Ino, size: uint64(st.Size), mode: uint64(st.Mode),
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano(),
	}
}

// checkMemo is the outcome of the last full check of a token file and its
// peers, valid while every file still has the stat it had then.
type checkMemo struct {
	keys   []statKey
	digest [sha256.Size]byte
	err    error
}

// currentKeys stats the token file (without following links: it must be a
// regular file) and every peer (following links, as reading them does). It
// reports false when a file changed within the racy window, or a memo
// could not be trusted for another reason.
func (t *TokenFile) currentKeys() ([]statKey, bool) {
	keys := make([]statKey, 0, 1+len(t.peers))
	keys = append(keys, keyOf(os.Lstat(t.path)))
	for _, p := range t.peers {
		if p.Path != "" {
			keys = append(keys, keyOf(os.Stat(p.Path)))
		}
	}
	cutoff := now().Add(-racyWindow).UnixNano()
	for _, k := range keys {
		if !k.missing && (k.ctimeNs > cutoff || k.mtimeNs > cutoff) {
			return keys, false
		}
	}
	return keys, !keys[0].missing
}

func sameKeys(a, b []statKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
