package store

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"runtime"
	"sort"
	"sync"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"golang.org/x/sys/unix"

	"github.com/notebridge/notebridge/pkg/internal/statkey"
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
// their digest from the process-wide manifest cache (filecache.Default).
func Snapshot(root *safefs.Root, lim Limits, useCache bool) (Manifest, error) {
	var c *filecache.Bundle
	if useCache {
		c = filecache.Default.ForRoot(root)
	}
	return SnapshotIn(root, lim, c)
}

// SnapshotIn is Snapshot with the digests of unchanged files taken from c
// (nil: hash every file). A digest is reused only when the file's stat
// matches the one it was computed under; files hashed here are stored
// under the stat of the file actually opened, not the walk's, so a change
// in between gets its own key.
func SnapshotIn(root *safefs.Root, lim Limits, c *filecache.Bundle) (Manifest, error) {
	var (
		mu    sync.Mutex
		files []FileState
	)
	now := c.Now()
	walkOpt := safefs.WalkOptions{MaxDepth: lim.MaxDepth, SkipHidden: true}
	err := root.WalkParallel(walkOpt, snapshotWorkers, func(e safefs.Entry) error {
		if e.Stat.Size > lim.MaxFileBytes {
			return tooLarge(e.Rel, lim.MaxFileBytes)
		}
		v, ok := c.Get(e.Rel, statkey.Of(&e.Stat), filecache.Digest)
		sum, _ := v.(string)
		if !ok {
			var err error
			var st unix.Stat_t
			if sum, st, err = hashFile(root, e.Rel, lim.MaxFileBytes); err != nil {
				return err
			}
			if sum == "" {
				return nil // vanished since the walk listed it
			}
			c.Put(e.Rel, statkey.Of(&st), filecache.Digest, sum, now)
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
	m := Manifest{Files: files, Revision: RevisionOf(files)}
	c.Retain(func(rel string) bool { return m.Lookup(rel) != "" })
	return m, nil
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
	buf := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(buf)
	if _, err := io.CopyBuffer(h, io.LimitReader(f, max+1), *buf); err != nil {
		return "", st, &safefs.PathError{Code: safefs.CodeIO, Rel: rel, Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), st, nil
}

// hashBufs recycles hashFile's read buffers: a fresh 32 KiB buffer per
// file made a cold 10,000-file snapshot allocate and clear 320 MB.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// SHA256Hex is the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
