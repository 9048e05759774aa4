package writejournal

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestAppendAndRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	j := Open(dir)
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("Open touched the disk")
	}
	if got, err := Read(j.Path()); err != nil || got != nil {
		t.Fatalf("empty journal: %v %v", got, err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := j.Append(Entry{Time: time.Now(), Operation: "create_note", Code: "WRITE_OUTCOME_UNKNOWN", Objects: map[string]string{"id": "x"}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := Read(j.Path())
	if err != nil || len(got) != 20 {
		t.Fatalf("read %d entries: %v", len(got), err)
	}
	fi, _ := os.Stat(j.Path())
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal mode %v", fi.Mode())
	}
	f, _ := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{torn")
	f.Close()
	if _, err := Read(j.Path()); err == nil {
		t.Fatal("torn line not reported")
	}
}
