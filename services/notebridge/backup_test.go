package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestBackupDuringWritesRestores: a backup taken while 50 edit_note calls
// run (two OAuth grants, one of them connected) restores onto a fresh
// state directory with every receipt and activity entry acknowledged
// before the backup began, and both OAuth clients keep working on the
// restored bridge: the access token is accepted and the refresh token
// rotates. A restore onto state that is not empty is refused, and so is
// a tampered archive or a backup of another Joplin, each changing
// nothing.
func TestBackupDuringWritesRestores(t *testing.T) {
	const joplinToken = "fake-joplin-token-0123456789"
	_, joplinURL, tf := joplinfake.Serve(t, joplinToken)
	nb := fakeFolder(t, joplinURL, tf, "Work", "")
	s := startOAuthServer(t, "--joplin-url", joplinURL, "--joplin-token-file", tf)
	client, access, refresh := s.grantWith("Backup client", "notes:read notes:write", url.Values{"notebook": {nb}, "write_notebook": {nb}})
	s.grant("Second client")
	h := s.session(access)
	type note struct {
		id      string
		updated int64
	}
	var notes []note
	for i := range 50 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_note","arguments":{"notebook_id":%q,"title":"n%d","body":"line one\n"}}}`, nb, i)
		_, raw := s.mcp("Bearer "+access, body, h)
		m := regexp.MustCompile(`\\"id\\":\\"([0-9a-f]{32})\\".*?\\"updated_time\\":(\d+)`).FindStringSubmatch(raw)
		if m == nil {
			t.Fatalf("create_note: %s", raw)
		}
		var up int64
		fmt.Sscan(m[2], &up)
		notes = append(notes, note{m[1], up})
	}

	archive := filepath.Join(t.TempDir(), "backup.tar.gz")
	// The first 25 edits are acknowledged before the backup starts; the
	// other 25 run while it is taken.
	acked := make(chan string, len(notes))
	started := make(chan struct{})
	var wg sync.WaitGroup
	for i, n := range notes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i >= 25 {
				<-started
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"edit_note","arguments":{"id":%q,"updated_time":%d,"changes":[{"op":"replace","find":"line one","text":"line %d"}]}}}`, n.id, n.updated, i)
			_, raw := s.mcp("Bearer "+access, body, h)
			m := regexp.MustCompile(`\\"receipt_id\\":\\"([0-9a-f]+)\\"`).FindStringSubmatch(raw)
			if m == nil {
				t.Errorf("edit_note: %s", raw)
				acked <- ""
				return
			}
			acked <- m[1]
		}()
	}
	var before []string
	for range 25 {
		before = append(before, <-acked)
	}
	close(started)
	if _, stderr, code := runCLI(t, "backup", "--state-dir", s.state, archive); code != 0 {
		t.Fatalf("backup: %d %s", code, stderr)
	}
	wg.Wait()
	if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("archive: %v %v", fi, err)
	}

	fresh := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(fresh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fresh, "something"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "restore", "--state-dir", fresh, "--joplin-url", joplinURL, "--joplin-token-file", tf, archive); code == 0 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("restore onto state that is not empty: %d %s", code, stderr)
	}
	os.Remove(filepath.Join(fresh, "something"))
	tampered := filepath.Join(t.TempDir(), "tampered.tar.gz")
	raw, _ := os.ReadFile(archive)
	raw[len(raw)/2] ^= 0xff
	os.WriteFile(tampered, raw, 0o600)
	if _, stderr, code := runCLI(t, "restore", "--state-dir", fresh, tampered); code == 0 {
		t.Fatalf("a tampered archive was restored: %s", stderr)
	}
	if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
		t.Fatalf("a refused restore left %v", entries)
	}
	_, otherURL, otherTF := joplinfake.Serve(t, joplinToken)
	fakeFolder(t, otherURL, otherTF, "Someone else's", "")
	if _, stderr, code := runCLI(t, "restore", "--state-dir", fresh, "--joplin-url", otherURL, "--joplin-token-file", otherTF, archive); code == 0 || !strings.Contains(stderr, "another Joplin") {
		t.Fatalf("restore against another Joplin: %d %s", code, stderr)
	}
	if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
		t.Fatalf("a restore refused for another Joplin left %v", entries)
	}
	if out, stderr, code := runCLI(t, "restore", "--state-dir", fresh, "--joplin-url", joplinURL, "--joplin-token-file", tf, archive); code != 0 {
		t.Fatalf("restore: %d %s %s", code, out, stderr)
	}

	jc, err := joplin.New(joplin.Config{BaseURL: joplinURL})
	if err != nil {
		t.Fatal(err)
	}
	store := receipts.Open(joplinops.ReceiptDir(fresh, jc.Endpoint()), receipts.DefaultLimits)
	logged, err := activity.ReadDir(activityDir(fresh), activity.Filter{Tool: "edit_note"})
	if err != nil {
		t.Fatal(err)
	}
	inLog := map[string]bool{}
	for _, e := range logged {
		if e.Receipt != nil {
			inLog[*e.Receipt] = true
		}
	}
	for _, id := range before {
		if r, ok, err := store.Load(id); err != nil || !ok || r == nil {
			t.Errorf("receipt %s, acknowledged before the backup, is not restored (%v)", id, err)
		}
		if !inLog[id] {
			t.Errorf("the activity entry of receipt %s, acknowledged before the backup, is not restored", id)
		}
	}

	restored := startOAuthServerIn(t, fresh, "--joplin-url", joplinURL, "--joplin-token-file", tf)
	if st, _ := restored.listTools(access, restored.session(access)); st != 200 {
		t.Fatalf("the access token on the restored bridge: %d", st)
	}
	st, tok := restored.form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {refresh}})
	if st != 200 || tok["access_token"] == nil {
		t.Fatalf("refresh on the restored bridge: %d %v", st, tok)
	}
	if out, _, _ := runCLI(t, "oauth", "grants", "--state-dir", fresh); !strings.Contains(out, "Backup client") || !strings.Contains(out, "Second client") {
		t.Fatalf("grants after the restore: %s", out)
	}
}
