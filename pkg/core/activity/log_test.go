package activity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func entry(tool string, at time.Time) Entry {
	return Entry{Time: at, Surface: SurfaceStdio, Credential: "stdio", Tool: tool, Outcome: OutcomeOK}
}

func TestAppendReadNewestFirstAndModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "activity")
	l, err := Open(dir, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.Append(entry("get_note", t0))
	l.Append(entry("search", t0.Add(time.Minute)))
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	got, err := l.Read(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Tool != "search" || got[1].Tool != "get_note" {
		t.Fatalf("got %+v, want search then get_note", got)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, currentName): 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), want)
		}
	}
}

func TestEntryJSONHasArraysAndNullReceipt(t *testing.T) {
	b, err := json.Marshal(entry("get_note", time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"notes":[]`, `"notebooks":[]`, `"tags":[]`, `"resources":[]`, `"receipt":null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

func TestFilter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := Entry{Time: t0, Credential: "oauth:g1", Tool: "get_note", Notes: []string{"n1"}, Notebooks: []string{"b1"}}
	cases := []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Grant: "g1"}, true},
		{Filter{Grant: "oauth:g1"}, true},
		{Filter{Grant: "g2"}, false},
		{Filter{Tool: "search"}, false},
		{Filter{Note: "n1", Notebook: "b1"}, true},
		{Filter{Note: "n2"}, false},
		{Filter{Notebook: "b2"}, false},
		{Filter{Since: t0.Add(time.Second)}, false},
		{Filter{Since: t0}, true},
	}
	for _, c := range cases {
		if got := c.f.Match(e); got != c.want {
			t.Errorf("%+v: Match = %v, want %v", c.f, got, c.want)
		}
	}
}

// TestRotationAndRetention fills the log past MaxBytes several times: the
// current file never outgrows it, at most MaxFiles rotated files remain,
// a rotated file older than Retention goes, and Read still returns every
// entry the kept files hold, newest first.
func TestRotationAndRetention(t *testing.T) {
	dir := t.TempDir()
	line, _ := json.Marshal(entry("get_note", time.Unix(0, 0).UTC()))
	opts := Options{MaxBytes: int64(len(line)+1) * 3, MaxFiles: 2, Retention: time.Hour}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	for i := range 12 {
		l.Append(entry("get_note", time.Unix(int64(i), 0).UTC()))
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	rotated, _ := l.rotated()
	if len(rotated) != 2 {
		t.Fatalf("%d rotated files kept, want MaxFiles = 2", len(rotated))
	}
	st, _ := os.Stat(filepath.Join(dir, currentName))
	if st.Size() > opts.MaxBytes {
		t.Errorf("current file is %d bytes, over MaxBytes %d", st.Size(), opts.MaxBytes)
	}
	got, err := l.Read(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 9 || got[0].Time.Unix() != 11 || got[8].Time.Unix() != 3 {
		t.Fatalf("read %d entries (first %v), want the 9 newest, 11 down to 3", len(got), got)
	}
	if lim, _ := l.Read(Filter{Limit: 4}); len(lim) != 4 || lim[0].Time.Unix() != 11 {
		t.Fatalf("Limit 4 read %v", lim)
	}

	// Age the oldest kept file past Retention: the next rotation drops it.
	old := clock.Add(-2 * time.Hour)
	if err := os.Chtimes(rotated[1], old, old); err != nil {
		t.Fatal(err)
	}
	l.opts.MaxFiles = 10
	for i := range 3 {
		l.Append(entry("get_note", time.Unix(int64(100+i), 0).UTC()))
	}
	if _, err := os.Stat(rotated[1]); !os.IsNotExist(err) {
		t.Errorf("a rotated file older than Retention was kept (%v)", err)
	}
	if _, err := os.Stat(rotated[0]); err != nil {
		t.Errorf("a recent rotated file went: %v", err)
	}
}

// TestSurvivesRestart closes the log mid-line (a crash tearing the last
// entry) and opens it again: the earlier entries are still read, the torn
// line is skipped, and new entries follow on lines of their own.
func TestSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(entry("get_note", time.Unix(1, 0).UTC()))
	l.Close()
	f, err := os.OpenFile(filepath.Join(dir, currentName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","tool":"tor`)
	f.Close()

	l, err = Open(dir, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(entry("search", time.Unix(2, 0).UTC()))
	got, err := ReadDir(dir, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Tool != "search" || got[1].Tool != "get_note" {
		t.Fatalf("after restart read %+v, want search then get_note", got)
	}
}

// TestWriteFailureIsReportedAndRecovers makes the log's file unopenable:
// Append does not panic or block, Err reports it, and a later successful
// Append clears it.
func TestWriteFailureIsReportedAndRecovers(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	l.f.Close() // every write on the held file now fails
	if err := os.Remove(filepath.Join(dir, currentName)); err != nil {
		t.Fatal(err)
	}
	// A directory where the file should be: no one, root included, can
	// open it for writing.
	if err := os.Mkdir(filepath.Join(dir, currentName), 0o700); err != nil {
		t.Fatal(err)
	}
	l.Append(entry("get_note", time.Unix(1, 0)))
	if l.Err() == nil || l.Failures() != 1 {
		t.Fatalf("Err = %v, Failures = %d after a failed write", l.Err(), l.Failures())
	}
	if err := os.Remove(filepath.Join(dir, currentName)); err != nil {
		t.Fatal(err)
	}
	l.Append(entry("get_note", time.Unix(2, 0)))
	if err := l.Err(); err != nil {
		t.Fatalf("Err = %v after a good write", err)
	}
}

// TestTwoWritersShareADirectory: stdio and serve append to one state
// directory. When one rotates the file, the other writes to the new file
// from its next check on, and Read returns every entry of both.
func TestTwoWritersShareADirectory(t *testing.T) {
	dir := t.TempDir()
	line, _ := json.Marshal(entry("get_note", time.Unix(0, 0).UTC()))
	opts := Options{MaxBytes: int64(len(line)+1) * 2, MaxFiles: 10}
	a, _ := Open(dir, opts)
	b, _ := Open(dir, opts)
	b.Append(entry("get_note", time.Unix(0, 0).UTC()))
	for i := 1; i <= 3; i++ { // a rotates at its third entry
		a.Append(entry("get_note", time.Unix(int64(i), 0).UTC()))
	}
	if rotated, _ := a.rotated(); len(rotated) != 1 {
		t.Fatalf("%d rotated files, want 1", len(rotated))
	}
	b.mu.Lock()
	b.checked = time.Time{} // as if followInterval had passed
	b.mu.Unlock()
	b.Append(entry("search", time.Unix(4, 0).UTC()))
	cur, err := readFile(filepath.Join(dir, currentName), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) != 2 || cur[1].Tool != "search" {
		t.Fatalf("the current file holds %+v: the second writer kept writing to the rotated one", cur)
	}
	got, err := ReadDir(dir, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range got {
		if e.Time.Unix() != int64(4-i) {
			t.Fatalf("entry %d is of second %d, want %d: every entry, newest first", i, e.Time.Unix(), 4-i)
		}
	}
	if len(got) != 5 {
		t.Fatalf("read %d entries, want 5", len(got))
	}
}
