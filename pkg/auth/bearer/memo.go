package bearer

import (
	"crypto/sha256"
	"os"
	"slices"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/statkey"
)

// racyWindow: a file changed this recently is never trusted from the memo,
// since a rewrite within one timestamp tick could leave its stat unchanged.
const racyWindow = 2 * time.Second

// now and readFile are replaced by tests.
var (
	now      = time.Now
	readFile = os.ReadFile
)

// checkMemo is the outcome of the last full check of a token file and its
// peers, valid while every file still has the stat it had then.
type checkMemo struct {
	keys   []statkey.Key
	digest [sha256.Size]byte
	err    error
}

// currentKeys stats the token file (without following links: it must be a
// regular file) and every peer (following links, as reading them does; a
// missing peer has the zero key). It reports false when the token file is
// missing or any file changed within the racy window.
func (t *TokenFile) currentKeys() ([]statkey.Key, bool) {
	keys := make([]statkey.Key, 0, 1+len(t.peers))
	keys = append(keys, statkey.OfInfo(os.Lstat(t.path)))
	for _, p := range t.peers {
		if p.Path != "" {
			keys = append(keys, statkey.OfInfo(os.Stat(p.Path)))
		}
	}
	at := now()
	for _, k := range keys {
		if k != (statkey.Key{}) && k.Racy(at, racyWindow) {
			return keys, false
		}
	}
	return keys, keys[0] != statkey.Key{}
}

// memoFor returns the memo when it was made for exactly these keys.
func (t *TokenFile) memoFor(keys []statkey.Key) *checkMemo {
	if m := t.memo.Load(); m != nil && slices.Equal(m.keys, keys) {
		return m
	}
	return nil
}
