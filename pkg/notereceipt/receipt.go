// Package notereceipt is the durable store of Joplin edit receipts: for each
// applied or undone plan, every note's pre-image and result, and which notes
// were written. A receipt is two files in the store directory: <id>.json,
// written once atomically before the first note is written, and
// <id>.marks, an append-only, fsynced line per note written and a final
// "done" line. Receipts hold note text: the directory is 0700 and the files
// 0600, and nothing here logs. The store is bounded in count, age and
// total size (Limits); the oldest receipts go first.
package notereceipt

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Kinds of receipt.
const (
	KindApply = "apply"
	KindUndo  = "undo"
)

// State is the part of a note an edit plan changes.
type State struct {
	Title      string   `json:"title"`
	Body       string   `json:"body"`
	NotebookID string   `json:"notebook_id"`
	IsTodo     bool     `json:"is_todo"`
	TodoDue    int64    `json:"todo_due"`
	Tags       []string `json:"tags,omitempty"` // sorted tag ids; nil when the plan does not touch tags
}

// Note is one note of a receipt.
type Note struct {
	ID              string `json:"id"`
	BaseUpdatedTime int64  `json:"base_updated_time"`
	Before          State  `json:"before"`
	After           State  `json:"after"`
}

// Header is what a receipt says about itself, without note text.
type Header struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	PlanDigest string    `json:"plan_digest,omitempty"`
	Undoes     string    `json:"undoes,omitempty"`
	Created    time.Time `json:"created"`
	NoteIDs    []string  `json:"note_ids"`
	Skipped    []string  `json:"skipped,omitempty"` // undo: conflicting notes left as they were
}

// Receipt is a header with its notes and progress.
type Receipt struct {
	Header
	Notes   []Note          `json:"notes"`
	Written map[string]bool `json:"-"`
	Done    bool            `json:"-"`
}

// Limits bounds the store.
type Limits struct {
	MaxReceipts int           // receipts kept
	MaxAge      time.Duration // older receipts are removed
	MaxBytes    int64         // total size of the store
}

// DefaultLimits keeps 200 receipts for 30 days within 256 MiB.
var DefaultLimits = Limits{MaxReceipts: 200, MaxAge: 30 * 24 * time.Hour, MaxBytes: 256 << 20}

// Store is a receipt directory. Callers serialise writers (the Joplin write
// lock); readers may run at any time.
type Store struct {
	dir    string
	limits Limits
	now    func() time.Time
}

// Open returns the store in dir; nothing is created until the first receipt.
func Open(dir string, l Limits) *Store {
	return &Store{dir: dir, limits: l, now: time.Now}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

var idPattern = regexp.MustCompile(`^[0-9a-f]{32,64}$`)

// ValidID reports whether id can name a receipt.
func ValidID(id string) bool { return idPattern.MatchString(id) }

type marker struct {
	Note        string `json:"note,omitempty"`
	UpdatedTime int64  `json:"updated_time,omitempty"`
	Done        bool   `json:"done,omitempty"`
}

// Create records r durably (write to a temporary file, fsync, rename,
// fsync the directory), then prunes the store, never removing r.
func (s *Store) Create(r *Receipt) error {
	if !ValidID(r.ID) {
		return fmt.Errorf("notereceipt: invalid id")
	}
	r.Created = s.now().UTC()
	r.NoteIDs = r.NoteIDs[:0]
	for _, n := range r.Notes {
		r.NoteIDs = append(r.NoteIDs, n.ID)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("notereceipt: create directory: %w", err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("notereceipt: encode: %w", err)
	}
	head, err := json.Marshal(r.Header)
	if err != nil {
		return fmt.Errorf("notereceipt: encode: %w", err)
	}
	// The header line comes first so listings read only that line.
	content := append(append(head, '\n'), raw...)
	if err := writeAtomic(s.dir, r.ID+".json", content); err != nil {
		return err
	}
	r.Written = map[string]bool{}
	return s.prune(r.ID)
}

func writeAtomic(dir, name string, content []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("notereceipt: temporary file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(content); err != nil {
		f.Close()
		return fmt.Errorf("notereceipt: write: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("notereceipt: sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("notereceipt: close: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("notereceipt: rename: %w", err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("notereceipt: open directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("notereceipt: sync directory: %w", err)
	}
	return nil
}

// MarkWritten records durably that note was written (Joplin answered with
// updatedTime).
func (s *Store) MarkWritten(r *Receipt, note string, updatedTime int64) error {
	if err := s.appendMark(r.ID, marker{Note: note, UpdatedTime: updatedTime}); err != nil {
		return err
	}
	r.Written[note] = true
	return nil
}

// MarkDone records durably that every note of r is settled.
func (s *Store) MarkDone(r *Receipt) error {
	if err := s.appendMark(r.ID, marker{Done: true}); err != nil {
		return err
	}
	r.Done = true
	return nil
}

func (s *Store) appendMark(id string, m marker) error {
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("notereceipt: encode mark: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, id+".marks"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("notereceipt: open marks: %w", err)
	}
	// After a torn line (a crash mid-append), start on a fresh line.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("notereceipt: write mark: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("notereceipt: sync mark: %w", err)
	}
	return f.Close()
}

// Load reads receipt id with its progress. ok is false when there is none.
func (s *Store) Load(id string) (r *Receipt, ok bool, err error) {
	if !ValidID(id) {
		return nil, false, nil
	}
	f, err := os.Open(filepath.Join(s.dir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("notereceipt: open: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if _, err := br.ReadString('\n'); err != nil {
		return nil, false, fmt.Errorf("notereceipt: receipt %s is unreadable", id)
	}
	r = &Receipt{}
	if err := json.NewDecoder(br).Decode(r); err != nil {
		return nil, false, fmt.Errorf("notereceipt: receipt %s is unreadable", id)
	}
	if err := s.readMarks(r); err != nil {
		return nil, false, err
	}
	return r, true, nil
}

// readMarks fills r's progress. A torn last line (a crash mid-append) is
// ignored: that mark was never durable.
func (s *Store) readMarks(r *Receipt) error {
	r.Written = map[string]bool{}
	raw, err := os.ReadFile(filepath.Join(s.dir, r.ID+".marks"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("notereceipt: read marks: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		var m marker
		if line == "" || json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m.Done {
			r.Done = true
		} else if m.Note != "" {
			r.Written[m.Note] = true
		}
	}
	return nil
}

// Summary is a receipt's header and progress, for listings.
type Summary struct {
	Header
	Written int   `json:"written"`
	Done    bool  `json:"done"`
	Bytes   int64 `json:"bytes"`
}

// List returns every receipt's summary, oldest first, reading only headers
// and marks.
func (s *Store) List() ([]Summary, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notereceipt: list: %w", err)
	}
	var out []Summary
	for _, e := range entries {
		id, isReceipt := strings.CutSuffix(e.Name(), ".json")
		if !isReceipt || !ValidID(id) {
			continue
		}
		sum, err := s.summary(id)
		if err != nil {
			return out, err
		}
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func (s *Store) summary(id string) (Summary, error) {
	f, err := os.Open(filepath.Join(s.dir, id+".json"))
	if err != nil {
		return Summary{}, fmt.Errorf("notereceipt: open: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1<<20)).ReadBytes('\n')
	var sum Summary
	if err != nil || json.Unmarshal(line, &sum.Header) != nil {
		return Summary{}, fmt.Errorf("notereceipt: receipt %s is unreadable", id)
	}
	r := &Receipt{Header: sum.Header}
	if err := s.readMarks(r); err != nil {
		return Summary{}, err
	}
	sum.Written, sum.Done = len(r.Written), r.Done
	for _, name := range []string{id + ".json", id + ".marks"} {
		if st, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
			sum.Bytes += st.Size()
		}
	}
	return sum, nil
}

// prune removes receipts (oldest first) beyond the count and size bounds
// and those older than MaxAge, keeping keep.
func (s *Store) prune(keep string) error {
	all, err := s.List()
	if err != nil {
		return err
	}
	var total int64
	for _, sum := range all {
		total += sum.Bytes
	}
	count := len(all)
	cutoff := s.now().Add(-s.limits.MaxAge)
	for _, sum := range all {
		over := count > s.limits.MaxReceipts || total > s.limits.MaxBytes || sum.Created.Before(cutoff)
		if !over || sum.ID == keep {
			continue
		}
		for _, name := range []string{sum.ID + ".json", sum.ID + ".marks"} {
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("notereceipt: prune: %w", err)
			}
		}
		count--
		total -= sum.Bytes
	}
	return nil
}
