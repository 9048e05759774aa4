// Package statebackup writes and restores an archive of the bridge's state
// directory (OAuth grants and clients, receipts, the activity log, the
// Joplin identity, scope pins and claims, the write journal; the search
// index optionally) while the bridge runs. The archive is a gzip'd tar
// whose first member, a manifest, names every file with its size and
// SHA-256; restore refuses anything the manifest does not vouch for.
package statebackup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/filelock"
)

// ManifestName is the archive's first member.
const ManifestName = "notebridge-backup.json"

// formatVersion is the manifest's format.
const formatVersion = 1

// lockWait bounds the wait for each lock the running bridge holds.
const lockWait = 30 * time.Second

// Manifest describes an archive.
type Manifest struct {
	Format    int       `json:"format"`
	Created   time.Time `json:"created"`
	WithIndex bool      `json:"with_index"`
	Files     []File    `json:"files"`
}

// File is one file of the archive, by its path in the state directory.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Options configures a backup.
type Options struct {
	// Locks are the lock files the running bridge takes around its
	// writes (the Joplin write lock, the OAuth state lock, the activity
	// log's); the backup holds them all while it reads, so the archive is
	// one moment of the state. Writers wait meanwhile.
	Locks []string
	// Index reports whether a file (a path relative to the state
	// directory) is the search index, left out unless WithIndex.
	Index     func(rel string) bool
	WithIndex bool
	// CopyIndex makes a consistent copy of the index file src at dst
	// (SQLite's VACUUM INTO); required with WithIndex.
	CopyIndex func(ctx context.Context, src, dst string) error
	Now       func() time.Time
}

// skipped reports whether rel is never archived: locks, temporary and
// damaged copies, the index's companions, earlier restores.
func skipped(rel string) bool {
	base := filepath.Base(rel)
	return strings.HasSuffix(base, ".lock") || strings.HasPrefix(base, ".tmp-") || strings.Contains(rel, "/.tmp-") || strings.HasSuffix(base, ".bad") ||
		strings.HasSuffix(base, "-wal") || strings.HasSuffix(base, "-shm") || strings.HasSuffix(base, "-journal") ||
		strings.HasPrefix(rel, "before-restore-") || strings.HasPrefix(rel, ".restore-")
}

// Write archives stateDir to path (0600, written beside it and renamed
// into place, so a failed backup leaves no partial archive).
func Write(ctx context.Context, stateDir, path string, opts Options) (*Manifest, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), ".tmp-backup-*")
	if err != nil {
		return nil, fmt.Errorf("backup: create the archive: %w", err)
	}
	defer os.Remove(tmp.Name())
	m, err := write(ctx, stateDir, abs, tmp, opts)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), abs); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return m, nil
}

func write(ctx context.Context, stateDir, archive string, out *os.File, opts Options) (*Manifest, error) {
	release, err := lockAll(ctx, opts.Locks)
	if err != nil {
		return nil, err
	}
	defer release()
	staged, err := os.MkdirTemp(filepath.Dir(archive), ".tmp-backup-index-*")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer os.RemoveAll(staged)
	m := &Manifest{Format: formatVersion, Created: opts.Now().UTC(), WithIndex: opts.WithIndex}
	sources := map[string]string{} // rel → the file to read
	err = filepath.WalkDir(stateDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(stateDir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || rel == "." || skipped(rel) || p == archive || !d.Type().IsRegular() {
			return nil
		}
		src := p
		if opts.Index != nil && opts.Index(rel) {
			if !opts.WithIndex {
				return nil
			}
			src = filepath.Join(staged, strings.ReplaceAll(rel, "/", "_"))
			if err := opts.CopyIndex(ctx, p, src); err != nil {
				return fmt.Errorf("copy the search index %s: %w", rel, err)
			}
		}
		sources[rel] = src
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	rels := make([]string, 0, len(sources))
	for rel := range sources {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	// Read each file once: hash it for the manifest and keep its bytes
	// for the archive, so both describe the same content.
	contents := make(map[string][]byte, len(rels))
	for _, rel := range rels {
		b, err := os.ReadFile(sources[rel])
		if err != nil {
			return nil, fmt.Errorf("backup: read %s: %w", rel, err)
		}
		if rel == activityCurrent {
			b = wholeLines(b)
		}
		sum := sha256.Sum256(b)
		contents[rel] = b
		m.Files = append(m.Files, File{Path: rel, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
	}
	release()
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	raw, _ := json.MarshalIndent(m, "", "  ")
	if err := put(tw, ManifestName, raw, m.Created); err != nil {
		return nil, err
	}
	for _, rel := range rels {
		if err := put(tw, rel, contents[rel], m.Created); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if err := out.Sync(); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return m, nil
}

// activityCurrent is the activity log's file being appended to; a line
// appended while it is read is left for the next backup.
const activityCurrent = "activity/activity.jsonl"

// wholeLines cuts b after its last newline.
func wholeLines(b []byte) []byte {
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		return b[:i+1]
	}
	return b[:0]
}

func put(tw *tar.Writer, name string, b []byte, at time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: at, Typeflag: tar.TypeReg}); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := tw.Write(b); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// lockAll takes every lock in order; the release gives them back (it may
// be called twice).
func lockAll(ctx context.Context, locks []string) (func(), error) {
	var held []func()
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
		held = nil
	}
	for _, l := range locks {
		if err := os.MkdirAll(filepath.Dir(l), 0o700); err != nil {
			release()
			return nil, fmt.Errorf("backup: %w", err)
		}
		lctx, cancel := context.WithTimeout(ctx, lockWait)
		r, err := filelock.Lock(lctx, l)
		cancel()
		if err != nil {
			release()
			return nil, fmt.Errorf("backup: the bridge holds %s for longer than %s: %w", filepath.Base(l), lockWait, err)
		}
		held = append(held, r)
	}
	return release, nil
}

// ErrNotBackup is a file that is not a notebridge backup.
var ErrNotBackup = errors.New("not a notebridge backup")

// ReadManifest reads the manifest of the archive at path.
func ReadManifest(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("restore: %s: %w", path, ErrNotBackup)
	}
	m, err := manifestOf(tar.NewReader(zr))
	if err != nil {
		return nil, fmt.Errorf("restore: %s: %w", path, err)
	}
	return m, nil
}

// maxManifest bounds the manifest member.
const maxManifest = 16 << 20

func manifestOf(tr *tar.Reader) (*Manifest, error) {
	h, err := tr.Next()
	if err != nil || h.Name != ManifestName || h.Size > maxManifest {
		return nil, ErrNotBackup
	}
	raw, err := io.ReadAll(io.LimitReader(tr, maxManifest))
	if err != nil {
		return nil, ErrNotBackup
	}
	var m Manifest
	if json.Unmarshal(raw, &m) != nil {
		return nil, ErrNotBackup
	}
	if m.Format != formatVersion {
		return nil, fmt.Errorf("a backup of format %d; this notebridge reads format %d", m.Format, formatVersion)
	}
	return &m, nil
}
