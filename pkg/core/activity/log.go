package activity

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/filelock"
)

// The log's files in its directory: the one being written, the rotated
// ones (named by the time they were rotated, so names sort by age) and the
// lock that serialises rotation between processes.
const (
	currentName  = "activity.jsonl"
	rotatedGlob  = "activity-*.jsonl"
	rotatedStamp = "20060102T150405.000000000Z"
	lockName     = "activity.lock"
)

// Options bound the log's size on disk.
type Options struct {
	// MaxBytes is the size at which the current file is rotated.
	MaxBytes int64
	// MaxFiles is how many rotated files are kept.
	MaxFiles int
	// Retention is how long a rotated file is kept after its last entry;
	// 0 keeps them until MaxFiles pushes them out.
	Retention time.Duration
}

// DefaultOptions keep up to about 60 MiB, 30 days.
var DefaultOptions = Options{MaxBytes: 10 << 20, MaxFiles: 5, Retention: 30 * 24 * time.Hour}

// Log is the append-only activity log in one directory: JSON lines, one
// entry each, in files of mode 0600 in a directory of mode 0700. Several
// processes may append to one directory (stdio and serve share the state
// directory). It is safe for concurrent use.
type Log struct {
	dir  string
	opts Options
	now  func() time.Time

	mu       sync.Mutex
	f        *os.File
	held     os.FileInfo // f's identity, to notice another process rotating it
	checked  time.Time   // when the path was last compared with held
	size     int64
	err      error // the last write's failure, nil after a success
	failures uint64
}

// Open opens (creating) the log in dir. Only bad options are an error:
// a directory or file that cannot be created or opened is the first write
// failure (Err), and every Append tries again, so the calls go on.
func Open(dir string, opts Options) (*Log, error) {
	if opts.MaxBytes <= 0 || opts.MaxFiles < 0 || opts.Retention < 0 {
		return nil, errors.New("activity: MaxBytes must be positive, MaxFiles and Retention not negative")
	}
	l := &Log{dir: dir, opts: opts, now: time.Now}
	if err := l.reopen(); err != nil {
		l.err, l.failures = err, 1
	}
	return l, nil
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// reopen opens the current file for appending. A last line a crash left
// torn is ended, so the next entry starts a line of its own.
func (l *Log) reopen() error {
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("activity: create directory: %w", err)
	}
	if err := os.Chmod(l.dir, 0o700); err != nil {
		return fmt.Errorf("activity: directory mode: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(l.dir, currentName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("activity: open: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("activity: stat: %w", err)
	}
	l.f, l.held, l.size = f, st, st.Size()
	if l.size > 0 && !endsLine(f.Name(), l.size) {
		n, err := f.Write([]byte("\n"))
		l.size += int64(n)
		if err != nil {
			return fmt.Errorf("activity: end a torn line: %w", err)
		}
	}
	return nil
}

// endsLine reports whether the file of size bytes at path ends with a
// newline.
func endsLine(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, size-1)
	return err != nil || b[0] == '\n'
}

// Append writes e. A failure does not stop the call it records: it is kept
// for Err, and the next Append tries again.
func (l *Log) Append(e Entry) {
	line, err := e.encode()
	if err != nil {
		l.fail(fmt.Errorf("activity: encode: %w", err))
		return
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.write(line); err != nil {
		l.err = err
		l.failures++
		return
	}
	l.err = nil
}

func (l *Log) fail(err error) {
	l.mu.Lock()
	l.err = err
	l.failures++
	l.mu.Unlock()
}

// write appends line, rotating first when the file would outgrow MaxBytes
// or another process rotated it.
func (l *Log) write(line []byte) error {
	if l.f == nil {
		if err := l.reopen(); err != nil {
			return err
		}
	}
	if err := l.followRotation(); err != nil {
		return err
	}
	if l.size > 0 && l.size+int64(len(line)) > l.opts.MaxBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		_ = l.f.Close()
		l.f = nil // the next Append opens the file again
		return fmt.Errorf("activity: write: %w", err)
	}
	return nil
}

// followInterval is how often an Append checks whether another process
// rotated the file: entries written meanwhile land at the end of the
// rotated file, which Read still reads.
const followInterval = time.Second

// followRotation reopens the current file when another process renamed
// the one l holds (or it is gone). Between two checks at most
// followInterval apart, it trusts the file it holds.
func (l *Log) followRotation() error {
	now := time.Now()
	if now.Sub(l.checked) < followInterval {
		return nil
	}
	l.checked = now
	cur, err := os.Stat(filepath.Join(l.dir, currentName))
	if err == nil && os.SameFile(l.held, cur) {
		return nil
	}
	return l.reopen()
}

// rotate renames the current file aside, opens a new one and drops the
// rotated files the options no longer keep. The lock keeps two processes
// from rotating the same file twice.
func (l *Log) rotate() error {
	release, err := filelock.Lock(context.Background(), filepath.Join(l.dir, lockName))
	if err != nil {
		return fmt.Errorf("activity: rotate: %w", err)
	}
	defer release()
	// Another process may have rotated while this one waited.
	l.checked = time.Time{}
	if err := l.followRotation(); err != nil {
		return err
	}
	if l.size == 0 {
		return nil
	}
	name := "activity-" + l.now().UTC().Format(rotatedStamp) + ".jsonl"
	if err := os.Rename(filepath.Join(l.dir, currentName), filepath.Join(l.dir, name)); err != nil {
		return fmt.Errorf("activity: rotate: %w", err)
	}
	if err := l.reopen(); err != nil {
		return err
	}
	return l.prune()
}

// prune removes the rotated files beyond MaxFiles and those older than
// Retention.
func (l *Log) prune() error {
	rotated, err := l.rotated()
	if err != nil {
		return err
	}
	for i, path := range rotated { // newest first
		old := false
		if l.opts.Retention > 0 {
			if st, err := os.Stat(path); err == nil && l.now().Sub(st.ModTime()) > l.opts.Retention {
				old = true
			}
		}
		if i >= l.opts.MaxFiles || old {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("activity: drop an old file: %w", err)
			}
		}
	}
	return nil
}

// rotated lists the rotated files, newest first.
func (l *Log) rotated() ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(l.dir, rotatedGlob))
	if err != nil {
		return nil, fmt.Errorf("activity: list files: %w", err)
	}
	slices.Sort(paths)
	slices.Reverse(paths)
	return paths, nil
}

// Err returns the last write's failure, nil when the last write succeeded.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Failures counts the entries the log failed to write since it was opened.
func (l *Log) Failures() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures
}

// Close closes the current file; a later Append opens it again.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Read returns the entries f selects, newest first, from every file of the
// log. A line that does not decode (one a crash tore) is skipped.
func (l *Log) Read(f Filter) ([]Entry, error) {
	return ReadDir(l.dir, f)
}

// ReadDir is Read for the log in dir, without opening it for writing
// (`notebridge activity`).
func ReadDir(dir string, f Filter) ([]Entry, error) {
	rotated, err := (&Log{dir: dir}).rotated()
	if err != nil {
		return nil, err
	}
	files := append([]string{filepath.Join(dir, currentName)}, rotated...)
	var out []Entry
	for i, path := range files { // newest file first
		entries, err := readFile(path, f)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
		// Another process may have appended to a file after it was
		// rotated: the next older file is read too before cutting.
		if f.Limit > 0 && len(out) >= f.Limit && i > 0 {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return b.Time.Compare(a.Time) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// maxLine bounds one entry's line; longer ones are skipped.
const maxLine = 4 << 20

// readFile returns the entries of the file at path f selects, oldest
// first; a missing file has none.
func readFile(path string, f Filter) ([]Entry, error) {
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("activity: read: %w", err)
	}
	defer file.Close()
	var out []Entry
	r := bufio.NewReaderSize(file, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) && len(line) < maxLine {
			var more []byte
			more, err = r.ReadSlice('\n')
			line = append(bytes.Clone(line), more...)
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var e Entry
			if json.Unmarshal(line, &e) == nil && f.Match(e) {
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("activity: read %s: %w", filepath.Base(path), err)
		}
	}
}
