// Package safefs gives symlink-proof, root-relative file access to one bundle
// directory. The root is opened by walking from "/" one component at a time
// with O_NOFOLLOW|O_DIRECTORY and then pinned by its descriptor; every later
// operation walks from that descriptor the same way, so neither a symlinked
// ancestor nor a directory swapped for a symlink after the check can redirect
// I/O outside the bundle. Errors name bundle-relative paths only.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Error codes carried by *PathError.
const (
	CodeNotAbsolute = "not_absolute"
	CodeNotClean    = "not_clean"
	CodeSymlink     = "symlink"
	CodeNotDir      = "not_directory"
	CodeNotFound    = "not_found"
	CodeNotRegular  = "not_regular"
	CodeBadPath     = "bad_path"
	CodeTooLarge    = "too_large"
	CodeExists      = "exists"
	CodeIO          = "io"
)

// PathError is a file-system failure. Rel is bundle-relative ("" for the
// bundle root itself) and the message never contains an absolute path.
type PathError struct {
	Code string
	Rel  string
	Err  error // underlying errno, for errors.Is; never rendered with paths
}

func (e *PathError) Error() string {
	where := "bundle_path"
	if e.Rel != "" {
		where = fmt.Sprintf("%q", e.Rel)
	}
	switch e.Code {
	case CodeNotAbsolute:
		return "bundle_path must be absolute"
	case CodeNotClean:
		return "bundle_path must be a clean path (no trailing slash, '.', '..' or repeated '/')"
	case CodeSymlink:
		return where + " is or passes through a symbolic link"
	case CodeNotDir:
		return where + " is not a directory"
	case CodeNotFound:
		return where + " does not exist"
	case CodeNotRegular:
		return where + " is not a regular file"
	case CodeBadPath:
		if e.Rel == "" {
			return "path is not a valid bundle-relative path"
		}
		return where + " is not a valid bundle-relative path"
	case CodeTooLarge:
		return where + " exceeds the size limit"
	case CodeExists:
		return where + " already exists"
	}
	var errno unix.Errno
	if errors.As(e.Err, &errno) {
		return where + ": " + errno.Error()
	}
	return where + ": i/o error"
}

func (e *PathError) Unwrap() error { return e.Err }

// IsCode reports whether err is a *PathError with the given code.
func IsCode(err error, code string) bool {
	var pe *PathError
	return errors.As(err, &pe) && pe.Code == code
}

// Root is an open bundle directory pinned by descriptor.
type Root struct {
	dir *os.File
}

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// CheckPath validates the shape of a bundle path without touching the disk.
func CheckPath(path string) error {
	if !filepath.IsAbs(path) {
		return &PathError{Code: CodeNotAbsolute}
	}
	if filepath.Clean(path) != path {
		return &PathError{Code: CodeNotClean}
	}
	return nil
}

// Open walks path from "/" refusing symlinks at every step and pins the
// final directory.
func Open(path string) (*Root, error) {
	if err := CheckPath(path); err != nil {
		return nil, err
	}
	fd, err := unix.Open("/", dirFlags, 0)
	if err != nil {
		return nil, &PathError{Code: CodeIO, Err: err}
	}
	for _, comp := range strings.Split(path, "/") {
		if comp == "" {
			continue
		}
		next, err := openDirAt(fd, comp)
		unix.Close(fd)
		if err != nil {
			var pe *PathError
			if errors.As(err, &pe) {
				pe.Rel = "" // never reveal ancestors
			}
			return nil, err
		}
		fd = next
	}
	return &Root{dir: os.NewFile(uintptr(fd), "bundle")}, nil
}

// openDirAt opens one directory entry without following a symlink.
func openDirAt(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, dirFlags, 0)
		if err == unix.EINTR {
			continue
		}
		if err == nil {
			return fd, nil
		}
		return -1, classifyOpen(dirfd, name, err, true)
	}
}

// classifyOpen turns an openat failure into a PathError, telling a symlink
// apart from a plain non-directory.
func classifyOpen(dirfd int, name string, err error, wantDir bool) error {
	switch err {
	case unix.ENOENT:
		return &PathError{Code: CodeNotFound, Rel: name, Err: err}
	case unix.ELOOP:
		return &PathError{Code: CodeSymlink, Rel: name, Err: err}
	case unix.ENOTDIR:
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return &PathError{Code: CodeSymlink, Rel: name, Err: err}
		}
		if wantDir {
			return &PathError{Code: CodeNotDir, Rel: name, Err: err}
		}
	}
	return &PathError{Code: CodeIO, Rel: name, Err: err}
}

// Close releases the pinned descriptor.
func (r *Root) Close() error { return r.dir.Close() }

// FD returns the pinned root descriptor (valid until Close).
func (r *Root) FD() int { return int(r.dir.Fd()) }

// SplitRel validates a bundle-relative path and returns its components. It
// refuses absolute paths, empty, "." and ".." components, backslashes and
// NUL bytes.
func SplitRel(rel string) ([]string, error) {
	if strings.HasPrefix(rel, "/") {
		return nil, &PathError{Code: CodeBadPath} // never echo an absolute path
	}
	if rel == "" || strings.ContainsAny(rel, "\\\x00") {
		return nil, &PathError{Code: CodeBadPath, Rel: printable(rel)}
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || len(p) > 255 {
			return nil, &PathError{Code: CodeBadPath, Rel: printable(rel)}
		}
	}
	return parts, nil
}

func printable(rel string) string {
	if len(rel) > 200 {
		rel = rel[:200]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, rel)
}

// dirOf opens the parent directory of rel (walking without symlinks) and
// returns its descriptor, which the caller closes, and the final name.
func (r *Root) dirOf(rel string) (int, string, error) {
	parts, err := SplitRel(rel)
	if err != nil {
		return -1, "", err
	}
	fd, err := r.walk(parts[:len(parts)-1], rel)
	if err != nil {
		return -1, "", err
	}
	return fd, parts[len(parts)-1], nil
}

// walk opens the directory reached by parts from the root.
func (r *Root) walk(parts []string, rel string) (int, error) {
	fd, err := unix.Dup(r.FD())
	if err != nil {
		return -1, &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	unix.CloseOnExec(fd)
	for i, p := range parts {
		next, err := openDirAt(fd, p)
		unix.Close(fd)
		if err != nil {
			var pe *PathError
			if errors.As(err, &pe) {
				pe.Rel = strings.Join(parts[:i+1], "/")
			}
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// OpenDir opens a directory inside the bundle ("" is the root itself).
func (r *Root) OpenDir(rel string) (*os.File, error) {
	var parts []string
	if rel != "" {
		var err error
		if parts, err = SplitRel(rel); err != nil {
			return nil, err
		}
	}
	fd, err := r.walk(parts, rel)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// Lstat stats rel without following a final symlink.
func (r *Root) Lstat(rel string) (unix.Stat_t, error) {
	var st unix.Stat_t
	dfd, name, err := r.dirOf(rel)
	if err != nil {
		return st, err
	}
	defer unix.Close(dfd)
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return st, &PathError{Code: CodeNotFound, Rel: rel, Err: err}
		}
		return st, &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	return st, nil
}

// OpenFile opens an existing regular file for reading, refusing symlinks,
// FIFOs and devices. The returned stat describes the opened file.
func (r *Root) OpenFile(rel string) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	dfd, name, err := r.dirOf(rel)
	if err != nil {
		return nil, st, err
	}
	defer unix.Close(dfd)
	fd, err := openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, st, relErr(classifyOpen(dfd, name, err, false), rel)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, st, &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, st, &PathError{Code: CodeNotRegular, Rel: rel}
	}
	return os.NewFile(uintptr(fd), rel), st, nil
}

// ReadFile reads a whole regular file of at most max bytes.
func (r *Root) ReadFile(rel string, max int64) ([]byte, error) {
	b, _, err := r.ReadFileStat(rel, max)
	return b, err
}

// ReadFileStat is ReadFile that also returns the stat of the opened file,
// taken before reading.
func (r *Root) ReadFileStat(rel string, max int64) ([]byte, unix.Stat_t, error) {
	f, st, err := r.OpenFile(rel)
	if err != nil {
		return nil, st, err
	}
	defer f.Close()
	if st.Size > max {
		return nil, st, &PathError{Code: CodeTooLarge, Rel: rel}
	}
	buf := make([]byte, st.Size)
	n, err := readFull(f, buf)
	if err != nil {
		return nil, st, &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	// A file that grew since fstat is read only up to its stat size; one
	// extra byte tells us it changed size and exceeds what we allocated.
	var probe [1]byte
	if m, _ := f.Read(probe[:]); m > 0 && int64(n+m) > max {
		return nil, st, &PathError{Code: CodeTooLarge, Rel: rel}
	}
	return buf[:n], st, nil
}

func readFull(f *os.File, buf []byte) (int, error) {
	n, err := io.ReadFull(f, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return n, err
}

func openat(dfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dfd, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func relErr(err error, rel string) error {
	var pe *PathError
	if errors.As(err, &pe) {
		pe.Rel = rel
	}
	return err
}
