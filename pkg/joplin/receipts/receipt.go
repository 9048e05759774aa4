// Package receipts is the durable store of Joplin edit receipts: for each
// applied or undone plan, every note's pre-image and result, and which notes
// were written. A receipt is two files in the store directory: <id>.json,
// written once atomically and synced before the first note is written, and
// <id>.marks, an append-only line per note written, the last one also
// saying "done". Marks are not synced: they are progress hints. A mark lost
// in a crash costs only reads, because whoever completes a receipt compares
// each note with its pre-image and result and never writes a note that is
// already as the receipt wants it. Receipts hold note text: the directory is 0700 and the files
// 0600, and nothing here logs. The store is bounded in count, age and
// total size (Limits); the oldest receipts go first.
package receipts

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
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
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
	Request    string    `json:"request,omitempty"` // digest of the request that made the receipt
	Undoes     string    `json:"undoes,omitempty"`
	Created    time.Time `json:"created"`
	NoteIDs    []string  `json:"note_ids"`
	Skipped    []string  `json:"skipped,omitempty"` // undo: conflicting notes left as they were
}

// Receipt is a header with its notes and progress.
type Receipt struct {
	Header
	Notes   []Note          `json:"-"`
	Written map[string]bool `json:"-"`
	// Updated holds each written note's updated_time as Joplin answered
	// the write (0 when the write changed only tags).
	Updated map[string]int64 `json:"-"`
	Done    bool             `json:"-"`
}

// storedNote is a Note as the receipt file holds it: the result's body is
// kept as a splice of the pre-image's (a one-line edit of a long note costs
// one line, not a second copy of the note).
type storedNote struct {
	ID              string `json:"id"`
	BaseUpdatedTime int64  `json:"base_updated_time"`
	Before          State  `json:"before"`
	After           State  `json:"after"` // Body empty; see Splice
	Splice          splice `json:"after_body"`
}

// splice rebuilds a body from another: its first Prefix bytes, Middle, and
// its last Suffix bytes.
type splice struct {
	Prefix int    `json:"prefix"`
	Middle string `json:"middle"`
	Suffix int    `json:"suffix"`
}

func makeSplice(before, after string) splice {
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	s := 0
	for s < len(before)-p && s < len(after)-p && before[len(before)-1-s] == after[len(after)-1-s] {
		s++
	}
	return splice{Prefix: p, Middle: after[p : len(after)-s], Suffix: s}
}

func (sp splice) apply(before string) (string, error) {
	if sp.Prefix < 0 || sp.Suffix < 0 || sp.Prefix+sp.Suffix > len(before) {
		return "", errors.New("splice out of range")
	}
	return before[:sp.Prefix] + sp.Middle + before[len(before)-sp.Suffix:], nil
}

type receiptFile struct {
	Header
	Notes []storedNote `json:"notes"`
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
	// write replaces a file durably: atomicfile.Write, or a failing
	// writer in tests (a full disk).
	write func(path string, content []byte, modTime time.Time) error

	mu   sync.Mutex
	view view // what the last directory scan found, plus receipts made since
}

// view lets Create skip the directory scan while the store is surely
// within its bounds. Other processes sharing the directory are seen at the
// next scan, at the latest rescanEvery after the last one.
type view struct {
	at     time.Time
	count  int
	bytes  int64
	oldest time.Time
}

const rescanEvery = 10 * time.Minute

// Open returns the store in dir; nothing is created until the first receipt.
func Open(dir string, l Limits) *Store {
	return &Store{dir: dir, limits: l, now: time.Now, write: atomicfile.Write}
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
	file := receiptFile{Header: r.Header}
	for _, n := range r.Notes {
		sn := storedNote{ID: n.ID, BaseUpdatedTime: n.BaseUpdatedTime, Before: n.Before, After: n.After,
			Splice: makeSplice(n.Before.Body, n.After.Body)}
		sn.After.Body = ""
		file.Notes = append(file.Notes, sn)
	}
	raw, err := json.Marshal(file)
	if err != nil {
		return fmt.Errorf("notereceipt: encode: %w", err)
	}
	head, err := json.Marshal(r.Header)
	if err != nil {
		return fmt.Errorf("notereceipt: encode: %w", err)
	}
	// The header line comes first so listings read only that line.
	content := append(append(head, '\n'), raw...)
	if err := s.writeAtomic(r.ID+".json", content, r.Created); err != nil {
		return err
	}
	r.Written, r.Updated = map[string]bool{}, map[string]int64{}
	return s.prune(r.ID, int64(len(content)))
}

// writeAtomic writes name in the store durably, all or nothing, with
// modification time mtime (the receipt's creation, which pruning reads).
func (s *Store) writeAtomic(name string, content []byte, mtime time.Time) error {
	if err := s.write(filepath.Join(s.dir, name), content, mtime); err != nil {
		return fmt.Errorf("notereceipt: %w", err)
	}
	return nil
}

// MarkWritten records (not synced) that note was written (Joplin answered with
// updatedTime). When it was the last unwritten note, the same line marks r
// done (one sync instead of two).
func (s *Store) MarkWritten(r *Receipt, note string, updatedTime int64) error {
	last := !r.Written[note]
	for _, n := range r.Notes {
		if n.ID != note && !r.Written[n.ID] {
			last = false
		}
	}
	if err := s.appendMark(r.ID, marker{Note: note, UpdatedTime: updatedTime, Done: last}); err != nil {
		return err
	}
	r.Written[note] = true
	r.Updated[note] = updatedTime
	r.Done = r.Done || last
	return nil
}

// MarkDone records (not synced) that every note of r is settled.
func (s *Store) MarkDone(r *Receipt) error {
	if r.Done {
		return nil
	}
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
	var file receiptFile
	if err := json.NewDecoder(br).Decode(&file); err != nil {
		return nil, false, fmt.Errorf("notereceipt: receipt %s is unreadable", id)
	}
	r = &Receipt{Header: file.Header}
	for _, sn := range file.Notes {
		n := Note{ID: sn.ID, BaseUpdatedTime: sn.BaseUpdatedTime, Before: sn.Before, After: sn.After}
		if n.After.Body, err = sn.Splice.apply(sn.Before.Body); err != nil {
			return nil, false, fmt.Errorf("notereceipt: receipt %s is unreadable", id)
		}
		r.Notes = append(r.Notes, n)
	}
	if err := s.readMarks(r); err != nil {
		return nil, false, err
	}
	return r, true, nil
}

// readMarks fills r's progress. A torn last line (a crash mid-append) is
// ignored: that mark was never durable.
func (s *Store) readMarks(r *Receipt) error {
	r.Written, r.Updated = map[string]bool{}, map[string]int64{}
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
		if m.Note != "" {
			r.Written[m.Note] = true
			r.Updated[m.Note] = m.UpdatedTime
		}
		r.Done = r.Done || m.Done
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
// and those older than MaxAge, keeping keep (just made, added bytes). It
// scans the directory only when the view says a bound may be passed, or the
// view is stale; a scan reads directory entries only: a receipt's age is
// its file's modification time (set to its creation).
func (s *Store) prune(keep string, added int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cutoff := now.Add(-s.limits.MaxAge)
	v := &s.view
	if !v.at.IsZero() && now.Sub(v.at) < rescanEvery {
		v.count++
		v.bytes += added
		if v.count <= s.limits.MaxReceipts && v.bytes <= s.limits.MaxBytes && !v.oldest.Before(cutoff) {
			return nil
		}
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("notereceipt: list: %w", err)
	}
	type file struct {
		id    string
		mtime time.Time
		bytes int64
	}
	var files []file
	var total int64
	sizes := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		if id, ok := strings.CutSuffix(e.Name(), ".marks"); ok {
			sizes[id] += info.Size()
			total += info.Size()
		} else if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && ValidID(id) {
			files = append(files, file{id: id, mtime: info.ModTime(), bytes: info.Size()})
			total += info.Size()
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mtime.Before(files[j].mtime) })
	count := len(files)
	oldest := now
	for _, f := range files {
		over := count > s.limits.MaxReceipts || total > s.limits.MaxBytes || f.mtime.Before(cutoff)
		if !over || f.id == keep {
			if f.mtime.Before(oldest) {
				oldest = f.mtime
			}
			continue
		}
		for _, name := range []string{f.id + ".json", f.id + ".marks"} {
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("notereceipt: prune: %w", err)
			}
		}
		count--
		total -= f.bytes + sizes[f.id]
	}
	*v = view{at: now, count: count, bytes: total, oldest: oldest}
	return nil
}
