package statebackup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testTime = time.Unix(0, 0)

func writeState(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRoundTrip: state files come back with their content, 0600 in 0700
// directories; locks, temporary files, damaged copies and (without
// WithIndex) the search index stay out; a partly appended activity line
// is left for the next backup.
func TestRoundTrip(t *testing.T) {
	state := writeState(t, map[string]string{
		"oauth/state.json": `{"grants":1}`, "joplin-identity.json": "{}", "receipts/x/r1.json": "r1",
		"activity/activity.jsonl": "{\"a\":1}\n{\"a\":", "locks/joplin-1.lock": "", ".tmp-123": "tmp",
		"search/joplin-1.db": "index", "search/joplin-1.db-wal": "wal", "search/joplin-1.db.bad": "bad",
	})
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	m, err := Write(context.Background(), state, archive, Options{Index: func(rel string) bool { return strings.HasSuffix(rel, ".db") }})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "activity/activity.jsonl joplin-identity.json oauth/state.json receipts/x/r1.json" {
		t.Fatalf("archived %s", got)
	}
	if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("archive mode: %v %v", fi, err)
	}
	fresh := filepath.Join(t.TempDir(), "state")
	if _, err := Restore(archive, fresh, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"oauth/state.json": `{"grants":1}`, "activity/activity.jsonl": "{\"a\":1}\n", "receipts/x/r1.json": "r1"} {
		p := filepath.Join(fresh, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		di, _ := os.Stat(filepath.Dir(p))
		if err != nil || string(b) != want || fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("%s: %q %v, modes %v %v", rel, b, err, fi.Mode(), di.Mode())
		}
	}
	if _, err := Restore(archive, fresh, RestoreOptions{}); !errors.Is(err, ErrStateNotEmpty) {
		t.Fatalf("restore onto restored state: %v", err)
	}
	if _, err := Restore(archive, fresh, RestoreOptions{Replace: true}); err != nil {
		t.Fatalf("restore with Replace: %v", err)
	}
	aside, _ := filepath.Glob(filepath.Join(fresh, "before-restore-*", "oauth", "state.json"))
	if len(aside) != 1 {
		t.Fatalf("the replaced state was not kept aside: %v", aside)
	}
}

// TestCheckRefusalChangesNothing: a Check that refuses leaves the state
// directory as it was.
func TestCheckRefusalChangesNothing(t *testing.T) {
	state := writeState(t, map[string]string{"joplin-identity.json": "{}"})
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := Write(context.Background(), state, archive, Options{}); err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	refuse := errors.New("another Joplin")
	if _, err := Restore(archive, fresh, RestoreOptions{Check: func(string) error { return refuse }}); !errors.Is(err, refuse) {
		t.Fatalf("refused check: %v", err)
	}
	if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

// craft builds an archive from a manifest and members.
func craft(t testing.TB, manifest string, members map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	put(tw, ManifestName, []byte(manifest), testTime)
	for name, body := range members {
		put(tw, name, []byte(body), testTime)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// TestBadArchivesAreRefused: not a backup, another format, a path out of
// the state, a member the manifest does not name, a digest that differs,
// a member missing: each refused, nothing written.
func TestBadArchivesAreRefused(t *testing.T) {
	const okSum = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" // "x"
	for name, raw := range map[string][]byte{
		"not gzip":       []byte("plain"),
		"format":         craft(t, `{"format":2,"files":[]}`, nil),
		"traversal":      craft(t, `{"format":1,"files":[{"path":"../evil","size":1,"sha256":"`+okSum+`"}]}`, map[string]string{"../evil": "x"}),
		"absolute":       craft(t, `{"format":1,"files":[{"path":"/etc/evil","size":1,"sha256":"`+okSum+`"}]}`, map[string]string{"/etc/evil": "x"}),
		"unnamed member": craft(t, `{"format":1,"files":[]}`, map[string]string{"extra": "x"}),
		"digest":         craft(t, `{"format":1,"files":[{"path":"a","size":1,"sha256":"00"}]}`, map[string]string{"a": "x"}),
		"missing":        craft(t, `{"format":1,"files":[{"path":"a","size":1,"sha256":"`+okSum+`"}]}`, nil),
	} {
		archive := filepath.Join(t.TempDir(), "b.tar.gz")
		os.WriteFile(archive, raw, 0o600)
		fresh := t.TempDir()
		if _, err := Restore(archive, fresh, RestoreOptions{}); err == nil {
			t.Errorf("%s: restored", name)
		}
		if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
			t.Errorf("%s: left %v", name, entries)
		}
	}
}

// FuzzRestore: any archive either restores inside the state directory
// or is refused leaving it empty; it never writes elsewhere.
func FuzzRestore(f *testing.F) {
	f.Add(craft(f, `{"format":1,"files":[{"path":"a","size":1,"sha256":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}]}`, map[string]string{"a": "x"}))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		root := t.TempDir()
		archive := filepath.Join(root, "b.tar.gz")
		os.WriteFile(archive, raw, 0o600)
		state := filepath.Join(root, "state")
		_, err := Restore(archive, state, RestoreOptions{})
		entries, _ := os.ReadDir(root)
		if len(entries) != 2 {
			t.Fatalf("wrote beside the state: %v", entries)
		}
		if err != nil {
			if left, _ := os.ReadDir(state); len(left) != 0 {
				t.Fatalf("a refused archive left %v", left)
			}
		}
	})
}
