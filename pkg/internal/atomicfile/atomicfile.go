// Package atomicfile replaces small state files durably, all or nothing:
// a private temporary file beside the target is written and synced, then
// renamed over it, and the directory is synced so the rename survives a
// crash. Readers see the old content or the new, never a part.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Write replaces path with content, mode 0600. A non-zero modTime is set
// on the file before it appears under path.
func Write(path string, content []byte, modTime time.Time) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename, nothing is left to remove
	if _, err := f.Write(content); err != nil {
		f.Close()
		return fmt.Errorf("write: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if !modTime.IsZero() {
		if err := os.Chtimes(tmp, modTime, modTime); err != nil {
			return fmt.Errorf("set time: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	return SyncDir(dir)
}

// SyncDir makes the entries of dir (a file created, renamed or removed)
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}
