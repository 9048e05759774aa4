package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// MkdirAll creates the directory rel and any missing parents (mode 0755),
// fsyncing each parent that gained an entry. Existing symlinks are refused.
func (r *Root) MkdirAll(rel string) error {
	parts, err := SplitRel(rel)
	if err != nil {
		return err
	}
	fd, err := unix.Dup(r.FD())
	if err != nil {
		return &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	unix.CloseOnExec(fd)
	for i, p := range parts {
		next, err := openDirAt(fd, p)
		if IsCode(err, CodeNotFound) {
			if merr := unix.Mkdirat(fd, p, 0o755); merr != nil && merr != unix.EEXIST {
				unix.Close(fd)
				return &PathError{Code: CodeIO, Rel: strings.Join(parts[:i+1], "/"), Err: merr}
			}
			if serr := unix.Fsync(fd); serr != nil {
				unix.Close(fd)
				return &PathError{Code: CodeIO, Rel: strings.Join(parts[:i+1], "/"), Err: serr}
			}
			next, err = openDirAt(fd, p)
		}
		unix.Close(fd)
		if err != nil {
			return relErr(err, strings.Join(parts[:i+1], "/"))
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}

// SyncDir fsyncs the directory rel ("" is the root).
func (r *Root) SyncDir(rel string) error {
	d, err := r.OpenDir(rel)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	return nil
}

// WriteFileSynced writes data to a fresh temporary file beside rel, fsyncs
// it, renames it over rel and fsyncs the directory. Readers see either the
// old or the new content, never a mix. rel's parent must exist.
func (r *Root) WriteFileSynced(rel string, data []byte, perm os.FileMode) error {
	dfd, name, err := r.dirOf(rel)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	tmp, err := writeTemp(dfd, name, data, perm)
	if err != nil {
		return relErr(err, rel)
	}
	if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	if err := unix.Fsync(dfd); err != nil {
		return &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	return nil
}

// writeTemp creates a uniquely named hidden file in dfd holding data,
// fsynced, and returns its name.
func writeTemp(dfd int, base string, data []byte, perm os.FileMode) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", &PathError{Code: CodeIO, Err: err}
	}
	if len(base) > 200 {
		base = base[:200]
	}
	tmp := "." + base + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return "", &PathError{Code: CodeIO, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	for _, e := range []error{werr, serr, cerr} {
		if e != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return "", &PathError{Code: CodeIO, Err: e}
		}
	}
	return tmp, nil
}

// RenameNoSync is Rename without the directory fsyncs, for callers that
// publish many files and fsync each touched directory once afterwards
// (SyncDir). Until then the rename may not survive a crash.
func (r *Root) RenameNoSync(from, to string) error {
	sfd, sname, err := r.dirOf(from)
	if err != nil {
		return err
	}
	defer unix.Close(sfd)
	dfd, dname, err := r.dirOf(to)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Renameat(sfd, sname, dfd, dname); err != nil {
		if err == unix.ENOENT {
			return &PathError{Code: CodeNotFound, Rel: from, Err: err}
		}
		return &PathError{Code: CodeIO, Rel: to, Err: err}
	}
	return nil
}

// Rename atomically renames from to to inside the bundle. Neither parent
// may be reached through a symlink; the destination parent is fsynced, and
// the source parent too when it differs.
func (r *Root) Rename(from, to string) error {
	if err := r.RenameNoSync(from, to); err != nil {
		return err
	}
	if err := r.SyncDir(parentOf(to)); err != nil {
		return err
	}
	if parentOf(from) != parentOf(to) {
		return r.SyncDir(parentOf(from))
	}
	return nil
}

func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// Remove unlinks a file (not a directory); a missing file is not an error.
// The parent directory is fsynced.
func (r *Root) Remove(rel string) error {
	dfd, name, err := r.dirOf(rel)
	if err != nil {
		if IsCode(err, CodeNotFound) {
			return nil
		}
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Unlinkat(dfd, name, 0); err != nil && err != unix.ENOENT {
		return &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	return unix.Fsync(dfd)
}

// RemoveDir removes an empty directory; a missing one is not an error.
func (r *Root) RemoveDir(rel string) error {
	dfd, name, err := r.dirOf(rel)
	if err != nil {
		if IsCode(err, CodeNotFound) {
			return nil
		}
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	return unix.Fsync(dfd)
}

// CreateExclusive creates a new file for writing (never following or
// replacing an existing entry).
func (r *Root) CreateExclusive(rel string, perm os.FileMode) (*os.File, error) {
	dfd, name, err := r.dirOf(rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if err == unix.EEXIST {
			return nil, &PathError{Code: CodeExists, Rel: rel, Err: err}
		}
		return nil, &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// OpenLockFile opens (creating it when create is set) a regular file used
// only for flock, refusing symlinks.
func (r *Root) OpenLockFile(rel string, create bool) (*os.File, error) {
	dfd, name, err := r.dirOf(rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	if create {
		flags = unix.O_RDWR | unix.O_CREAT | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	}
	fd, err := openat(dfd, name, flags, 0o644)
	if err != nil {
		return nil, relErr(classifyOpen(dfd, name, err, false), rel)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &PathError{Code: CodeNotRegular, Rel: rel}
	}
	return os.NewFile(uintptr(fd), rel), nil
}
