package receipts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func id(n int) string { return fmt.Sprintf("%032x", n) }

func TestCreateMarkLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "receipts")
	s := Open(dir, DefaultLimits)
	r := &Receipt{Header: Header{ID: id(0), Kind: KindApply, PlanDigest: "d"}, Notes: []Note{
		{ID: "n1", Before: State{Body: "secret text"}, After: State{Body: "new"}},
		{ID: "n2"},
	}}
	if err := s.Create(r); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkWritten(r, "n1", 42); err != nil {
		t.Fatal(err)
	}
	// A torn final line, as a crash mid-append leaves it, is ignored.
	f, _ := os.OpenFile(filepath.Join(dir, id(0)+".marks"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"note":"n2","upd`)
	f.Close()
	got, ok, err := s.Load(id(0))
	if err != nil || !ok || got.Done || !got.Written["n1"] || got.Written["n2"] || got.Notes[0].Before.Body != "secret text" {
		t.Fatalf("load: %+v %v %v", got, ok, err)
	}
	if err := s.MarkDone(got); err != nil {
		t.Fatal(err)
	}
	sums, err := s.List()
	if err != nil || len(sums) != 1 || sums[0].Written != 1 || !sums[0].Done || len(sums[0].NoteIDs) != 2 {
		t.Fatalf("list: %+v %v", sums, err)
	}
	for _, p := range []string{dir, filepath.Join(dir, id(0)+".json"), filepath.Join(dir, id(0)+".marks")} {
		st, _ := os.Stat(p)
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v", p, st.Mode())
		}
	}
	if _, ok, _ := s.Load("../../etc/passwd"); ok {
		t.Fatal("path id accepted")
	}
	if _, ok, err := s.Load(id(5)); ok || err != nil {
		t.Fatal("missing receipt found")
	}
}

func TestPruneByCountAgeAndSize(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := Open(dir, Limits{MaxReceipts: 3, MaxAge: time.Hour, MaxBytes: 1 << 20})
	s.now = func() time.Time { return now }
	for i := 0; i < 5; i++ {
		now = now.Add(time.Minute)
		if err := s.Create(&Receipt{Header: Header{ID: id(i), Kind: KindApply}}); err != nil {
			t.Fatal(err)
		}
	}
	sums, _ := s.List()
	if len(sums) != 3 || sums[0].ID != id(2) {
		t.Fatalf("count bound: %+v", sums)
	}
	now = now.Add(2 * time.Hour)
	if err := s.Create(&Receipt{Header: Header{ID: id(9), Kind: KindApply}}); err != nil {
		t.Fatal(err)
	}
	if sums, _ = s.List(); len(sums) != 1 || sums[0].ID != id(9) {
		t.Fatalf("age bound: %+v", sums)
	}
	s.limits.MaxBytes = 10
	now = now.Add(time.Minute)
	if err := s.Create(&Receipt{Header: Header{ID: id(10), Kind: KindApply}}); err != nil {
		t.Fatal(err)
	}
	if sums, _ = s.List(); len(sums) != 1 || sums[0].ID != id(10) {
		t.Fatalf("size bound keeps only the new receipt: %+v", sums)
	}
}

// TestResultBodyIsStoredAsASplice: a one-line edit of a long note stores
// the note once, and the result body comes back exact.
func TestResultBodyIsStoredAsASplice(t *testing.T) {
	s := Open(t.TempDir(), DefaultLimits)
	long := strings.Repeat("a line of text\n", 10_000)
	edited := strings.Replace(long, "a line", "one liné", 1)
	r := &Receipt{Header: Header{ID: id(1), Kind: KindApply}, Notes: []Note{
		{ID: "n", Before: State{Title: "t", Body: long}, After: State{Title: "u", Body: edited}},
		{ID: "m", Before: State{Body: "xyz"}, After: State{Body: ""}},
	}}
	if err := s.Create(r); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Load(id(1))
	if err != nil || got.Notes[0].After.Body != edited || got.Notes[0].After.Title != "u" || got.Notes[1].After.Body != "" {
		t.Fatalf("round trip: %v", err)
	}
	sums, _ := s.List()
	if sums[0].Bytes > int64(len(long))*12/10 { // JSON escapes each line break
		t.Fatalf("receipt of %d bytes stores the body twice", sums[0].Bytes)
	}
}

// TestFullDiskLeavesNoReceipt: a write that fails with ENOSPC fails
// Create with the cause kept (the executor answers it STORAGE_FULL) and
// leaves no receipt.
func TestFullDiskLeavesNoReceipt(t *testing.T) {
	s := Open(t.TempDir(), DefaultLimits)
	s.write = func(path string, _ []byte, _ time.Time) error {
		return fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC})
	}
	r := &Receipt{Header: Header{ID: id(0), Kind: KindApply, PlanDigest: "d"}, Notes: []Note{{ID: "n1", After: State{Body: "new"}}}}
	if err := s.Create(r); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Create on a full disk: %v", err)
	}
	if _, ok, err := s.Load(id(0)); ok || err != nil {
		t.Fatalf("a receipt is left: %v %v", ok, err)
	}
}
