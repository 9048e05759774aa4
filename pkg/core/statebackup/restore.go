package statebackup

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// ErrStateNotEmpty is a state directory that already holds state.
var ErrStateNotEmpty = errors.New("the state directory is not empty")

// maxFile bounds one restored file (the index included).
const maxFile = 16 << 30

// RestoreOptions configures a restore.
type RestoreOptions struct {
	// Replace moves what the state directory holds aside, into
	// before-restore-<time>/ inside it, instead of refusing.
	Replace bool
	// Check runs on the extracted state before it is put in place (for
	// example the Joplin identity against the Joplin configured); an
	// error refuses the restore and leaves the state directory as it was.
	Check func(extracted string) error
	// Ignore names files of the state directory that do not count as
	// state (the archive itself when it was copied there).
	Ignore []string
	Now    func() time.Time
}

// Restore extracts the archive at archivePath into stateDir. Everything
// is extracted and checked against the manifest in a directory beside the
// state first; only then does it replace the state, so a bad archive
// changes nothing.
func Restore(archivePath, stateDir string, opts RestoreOptions) (*Manifest, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	present, err := stateEntries(stateDir, opts.Ignore)
	if err != nil {
		return nil, err
	}
	if len(present) > 0 && !opts.Replace {
		return nil, fmt.Errorf("restore: %s holds %s: %w (restore onto a fresh state, or pass --replace to keep it aside in before-restore-*/)",
			stateDir, strings.Join(present, ", "), ErrStateNotEmpty)
	}
	tmp, err := os.MkdirTemp(stateDir, ".restore-")
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer os.RemoveAll(tmp)
	m, err := extract(archivePath, tmp)
	if err != nil {
		return nil, err
	}
	if opts.Check != nil {
		if err := opts.Check(tmp); err != nil {
			return nil, err
		}
	}
	if len(present) > 0 {
		aside := filepath.Join(stateDir, "before-restore-"+opts.Now().UTC().Format("20060102T150405Z"))
		if err := os.Mkdir(aside, 0o700); err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		for _, name := range present {
			if err := os.Rename(filepath.Join(stateDir, name), filepath.Join(aside, name)); err != nil {
				return nil, fmt.Errorf("restore: keep %s aside: %w", name, err)
			}
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(tmp, e.Name()), filepath.Join(stateDir, e.Name())); err != nil {
			return nil, fmt.Errorf("restore: put %s in place: %w", e.Name(), err)
		}
	}
	return m, nil
}

// stateEntries lists what stateDir holds, leaving out ignored names,
// earlier restores' leftovers and earlier backups kept aside.
func stateEntries(stateDir string, ignore []string) ([]string, error) {
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		ignored := strings.HasPrefix(n, ".restore-") || strings.HasPrefix(n, "before-restore-")
		for _, i := range ignore {
			ignored = ignored || filepath.Base(i) == n
		}
		if !ignored {
			out = append(out, n)
		}
	}
	return out, nil
}

// extract writes every file of the archive under dir (0600 files in 0700
// directories), checking each against the manifest: no member outside
// it, none missing, every size and digest as it says.
func extract(archivePath, dir string) (*Manifest, error) {
	f, err := os.Open(archivePath)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("restore: %s: %w", archivePath, ErrNotBackup)
	}
	tr := tar.NewReader(zr)
	m, err := manifestOf(tr)
	if err != nil {
		return nil, fmt.Errorf("restore: %s: %w", archivePath, err)
	}
	want := map[string]File{}
	for _, fl := range m.Files {
		if !safePath(fl.Path) {
			return nil, fmt.Errorf("restore: the manifest names %q, outside the state directory", fl.Path)
		}
		want[fl.Path] = fl
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("restore: %s is damaged: %w", archivePath, err)
		}
		fl, ok := want[h.Name]
		if !ok || h.Typeflag != tar.TypeReg || h.Size != fl.Size || h.Size > maxFile {
			return nil, fmt.Errorf("restore: %q does not match the backup's manifest", h.Name)
		}
		delete(want, h.Name)
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(h.Name)), tr, fl); err != nil {
			return nil, err
		}
	}
	for p := range want {
		return nil, fmt.Errorf("restore: the archive lacks %q, which its manifest names", p)
	}
	return m, nil
}

func writeFile(p string, r io.Reader, fl File) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), io.LimitReader(r, fl.Size))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore: %s: %w", fl.Path, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != fl.SHA256 {
		return fmt.Errorf("restore: %q is not what the backup recorded (SHA-256 differs)", fl.Path)
	}
	return nil
}

// safePath reports whether p is a clean relative path inside the state.
func safePath(p string) bool {
	return p != "" && p != ManifestName && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != "." &&
		!strings.HasPrefix(p, "../") && p != ".." && !strings.Contains(p, "\\") && !skipped(p)
}
