package statkey

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOfInfoMatchesOf: a key from os.Stat is the key of the same unix stat,
// and a failed stat gives the zero key.
func TestOfInfoMatchesOf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	k := OfInfo(os.Stat(p))
	if k == (Key{}) || k != Of(&st) || k.Size != 3 {
		t.Fatalf("OfInfo %+v, Of %+v", k, Of(&st))
	}
	if OfInfo(nil, errors.New("gone")) != (Key{}) {
		t.Fatal("a failed stat must give the zero key")
	}
}

func TestRacy(t *testing.T) {
	at := time.Unix(1000, 0)
	old := at.Add(-3 * time.Second).UnixNano()
	for name, k := range map[string]Key{
		"mtime recent": {MtimeNs: at.Add(-time.Second).UnixNano(), CtimeNs: old},
		"ctime recent": {MtimeNs: old, CtimeNs: at.Add(-time.Second).UnixNano()},
		"future":       {MtimeNs: at.Add(time.Hour).UnixNano(), CtimeNs: old},
	} {
		if !k.Racy(at, 2*time.Second) {
			t.Errorf("%s: not racy", name)
		}
	}
	if (Key{MtimeNs: old, CtimeNs: old}).Racy(at, 2*time.Second) {
		t.Error("a key 3 s old is racy in a 2 s window")
	}
}
