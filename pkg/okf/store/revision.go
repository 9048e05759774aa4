package store

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"golang.org/x/sys/unix"
)

// FileState is one visible file's content digest.
type FileState struct {
	Path string
	SHA  string // hex SHA-256 of the content
}

// Manifest is the sorted list of visible files and the revision over them.
type Manifest struct {
	Files    []FileState
	Revision string
}

// Lookup returns the digest of path, or "" when the manifest lacks it.
func (m Manifest) Lookup(path string) string {
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= path })
	if i < len(m.Files) && m.Files[i].Path == path {
		return m.Files[i].SHA
	}
	return ""
}

// RevisionOf computes "sha256:<hex>" over files, which must be sorted by
// path: each entry contributes path, NUL, hex digest, newline.
func RevisionOf(files []FileState) string {
	h := sha256.New()
	for _, f := range files {
		io.WriteString(h, f.Path)
		h.Write([]byte{0})
		io.WriteString(h, f.SHA)
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// statKey identifies a file version the way git's index does. Any change to
// content changes at least one of these on a sane file system.
type statKey struct {
	path             string
	dev, ino         uint64
	size             int64
	mtimeNs, ctimeNs int64
}

// hashCache is the process-wide stat-keyed digest cache. It is an
// optimisation only: entries are trusted solely when every stat field
// matches, and files changed within the last racyWindow are never cached
// (a write inside the same timestamp tick could keep the stat unchanged).
type hashCache struct {
	mu sync.Mutex
	m  map[statKey]string
}

const (
	racyWindow      = 2 * time.Second
	maxCacheEntries = 500_000
)

var digests = &hashCache{m: map[statKey]string{}}

func keyOf(rel string, st *unix.Stat_t) statKey {
	return statKey{
		path: rel, dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano(),
	}
}

func (c *hashCache) get(k statKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *hashCache) put(k statKey, sum string, now time.Time) {
	if now.UnixNano()-k.ctimeNs < int64(racyWindow) || now.UnixNano()-k.mtimeNs < int64(racyWindow) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCacheEntries {
		clear(c.m)
	}
	c.m[k] = sum
}

// Limits bounds a whole-bundle scan.
type Limits struct {
	MaxFiles     int   // visible files
	MaxFileBytes int64 // bytes in any one file
	MaxDepth     int   // directory nesting
}

// DefaultLimits suits bundles of up to 100,000 files of up to 4 MiB.
var DefaultLimits = Limits{MaxFiles: 100_000, MaxFileBytes: 4 << 20, MaxDepth: 32}

// Snapshot hashes every visible regular file (hidden entries, including
// .okf/, are excluded) and returns the manifest. A symlink, special file or
// exceeded limit anywhere is an error. useCache lets unchanged files reuse
// their cached digest.
func Snapshot(root *safefs.Root, lim Limits, useCache bool) (Manifest, error) {
	var (
		mu    sync.Mutex
		files []FileState
	)
	now := time.Now()
	walkOpt := safefs.WalkOptions{MaxDepth: lim.MaxDepth, SkipHidden: true}
	err := root.WalkParallel(walkOpt, snapshotWorkers, func(e safefs.Entry) error {
		if e.Stat.Size > lim.MaxFileBytes {
			return tooLarge(e.Rel, lim.MaxFileBytes)
		}
		k := keyOf(e.Rel, &e.Stat)
		sum, ok := "", false
		if useCache {
			sum, ok = digests.get(k)
		}
		if !ok {
			var err error
			var st unix.Stat_t
			if sum, st, err = hashFile(root, e.Rel, lim.MaxFileBytes); err != nil {
				return err
			}
			if sum == "" {
				return nil // vanished since the walk listed it
			}
			// Keyed by the stat of the file actually hashed, not the
			// walk's: a change in between then gets its own key.
			digests.put(keyOf(e.Rel, &st), sum, now)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(files) >= lim.MaxFiles {
			return domainerr.New(domainerr.ResourceLimit, "the bundle has more than %d files", lim.MaxFiles).
				WithDetails(map[string]any{"limit": "max_files", "value": lim.MaxFiles})
		}
		files = append(files, FileState{Path: e.Rel, SHA: sum})
		return nil
	})
	if err != nil {
		return Manifest{}, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return Manifest{Files: files, Revision: RevisionOf(files)}, nil
}

// snapshotWorkers is how many goroutines walk and hash a bundle.
var snapshotWorkers = min(runtime.GOMAXPROCS(0), 4)

func tooLarge(rel string, max int64) error {
	return domainerr.New(domainerr.ResourceLimit, "file %q is larger than %d bytes", rel, max).
		WithDetails(map[string]any{"limit": "max_file_bytes", "value": max, "path": rel})
}

// HashFile returns the hex SHA-256 of one file, read without following
// symlinks, or "" when it does not exist.
func HashFile(root *safefs.Root, rel string, max int64) (string, error) {
	sum, _, err := hashFile(root, rel, max)
	return sum, err
}

// hashFile is HashFile that also returns the stat of the opened file.
func hashFile(root *safefs.Root, rel string, max int64) (string, unix.Stat_t, error) {
	f, st, err := root.OpenFile(rel)
	if err != nil {
		if safefs.IsCode(err, safefs.CodeNotFound) {
			return "", st, nil
		}
		return "", st, err
	}
	defer f.Close()
	if st.Size > max {
		return "", st, tooLarge(rel, max)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, max+1)); err != nil {
		return "", st, &safefs.PathError{Code: safefs.CodeIO, Rel: rel, Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), st, nil
}

// SHA256Hex is the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
