// Package writejournal is the append-only operator journal of writes whose
// outcome is unknown: JSON lines in the state directory recording the
// operation, a digest of its arguments, the time, and the object id the
// bridge chose. It never holds bodies, titles, content or secrets.
package writejournal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileName is the journal's name inside the state directory.
const FileName = "uncertain-writes.jsonl"

// Entry is one uncertain write.
type Entry struct {
	Time       time.Time         `json:"time"`
	Operation  string            `json:"operation"`
	ArgsSHA256 string            `json:"args_sha256"`
	Transport  string            `json:"transport"`
	Code       string            `json:"code"`
	Objects    map[string]string `json:"objects,omitempty"`
	Known      string            `json:"known"`
}

// Journal appends entries to one file. It is safe for concurrent use.
type Journal struct {
	path string
	mu   sync.Mutex
}

// Open returns the journal in stateDir. Nothing is touched on disk until
// the first entry, which creates the directory (0700) and file (0600).
func Open(stateDir string) *Journal {
	return &Journal{path: filepath.Join(stateDir, FileName)}
}

// Path is the journal file's path.
func (j *Journal) Path() string { return j.path }

// Append writes e as one line and syncs it to disk.
func (j *Journal) Append(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("journal: encode: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(j.path), 0o700); err != nil {
		return fmt.Errorf("journal: create state directory: %w", err)
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("journal: open: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("journal: write: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("journal: sync: %w", err)
	}
	return f.Close()
}

// Read returns every entry, oldest first. A missing journal is empty. A
// malformed line (say, a torn final write) is reported, not skipped.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: open: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("journal: line %d is not a valid entry", n)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("journal: read: %w", err)
	}
	return out, nil
}
