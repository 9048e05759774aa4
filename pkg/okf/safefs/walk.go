package safefs

import (
	"errors"
	"io"
	"sort"

	"golang.org/x/sys/unix"
)

// Entry is one visible file met by Walk.
type Entry struct {
	Rel  string      // bundle-relative path with '/' separators
	Stat unix.Stat_t // lstat of the entry
}

// ErrStop ends a Walk early without error.
var ErrStop = errors.New("stop walk")

// WalkOptions bounds a walk.
type WalkOptions struct {
	MaxDepth int // directory nesting below the root; 0 means 64
	// SkipHidden skips entries whose name starts with '.', including the
	// store's .okf directory.
	SkipHidden bool
	// OnDir, when set, gets each directory's open descriptor (the root's
	// first) before the directory is read; an error ends the walk.
	OnDir func(fd int) error
}

// Walk visits every regular file below the root in lexical order, refusing
// (with a CodeSymlink error) any symlink and (CodeNotRegular) any FIFO,
// socket or device it meets. fn returning ErrStop ends the walk cleanly.
func (r *Root) Walk(opt WalkOptions, fn func(Entry) error) error {
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = 64
	}
	fd, err := unix.Dup(r.FD())
	if err != nil {
		return &PathError{Code: CodeIO, Err: err}
	}
	unix.CloseOnExec(fd)
	err = r.walkDir(fd, "", 0, opt, fn)
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// ErrTooDeep reports a directory nested deeper than WalkOptions.MaxDepth.
var ErrTooDeep = errors.New("directory nesting exceeds the depth limit")

func (r *Root) walkDir(fd int, rel string, depth int, opt WalkOptions, fn func(Entry) error) error {
	if opt.OnDir != nil {
		if err := opt.OnDir(fd); err != nil {
			unix.Close(fd)
			return err
		}
	}
	names, err := readNames(fd)
	if err != nil {
		unix.Close(fd)
		return &PathError{Code: CodeIO, Rel: rel, Err: err}
	}
	defer unix.Close(fd)
	sort.Strings(names)
	for _, name := range names {
		if opt.SkipHidden && name[0] == '.' {
			continue
		}
		child := name
		if rel != "" {
			child = rel + "/" + name
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				continue // vanished while we walked
			}
			return &PathError{Code: CodeIO, Rel: child, Err: err}
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return &PathError{Code: CodeSymlink, Rel: child}
		case unix.S_IFDIR:
			if depth+1 > opt.MaxDepth {
				return &PathError{Code: CodeTooLarge, Rel: child, Err: ErrTooDeep}
			}
			sub, err := openDirAt(fd, name)
			if err != nil {
				return relErr(err, child)
			}
			if err := r.walkDir(sub, child, depth+1, opt, fn); err != nil {
				return err
			}
		case unix.S_IFREG:
			if err := fn(Entry{Rel: child, Stat: st}); err != nil {
				return err
			}
		default:
			return &PathError{Code: CodeNotRegular, Rel: child}
		}
	}
	return nil
}

// readNames lists a directory descriptor's entries (without . and ..).
func readNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	if _, err := unix.Seek(dup, 0, io.SeekStart); err != nil {
		unix.Close(dup)
		return nil, err
	}
	var names []string
	buf := make([]byte, 32<<10)
	defer unix.Close(dup)
	for {
		n, err := unix.Getdents(dup, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}
