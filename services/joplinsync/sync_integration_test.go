//go:build integration

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Run: docker compose build joplin && TESTCONTAINERS_RYUK_DISABLED=true \
//   go test -tags integration -count=1 -v -run TestSync ./services/joplinsync
// (needs rclone on the host: apt-get install rclone).

func marker(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// fileWith returns the base name (without .md) of the WebDAV or folder
// target file holding s: a note's id, for unencrypted targets.
func fileWith(t *testing.T, dir, s string) string {
	t.Helper()
	found := filesWith(dir, s, ".md")
	if len(found) != 1 {
		t.Fatalf("%d files in %s hold %q, want 1", len(found), dir, s)
	}
	return strings.TrimSuffix(filepath.Base(found[0]), ".md")
}

// arrival measures how long after start a note written elsewhere is served
// by notebridge: get_note with its text, and search finding it.
func arrival(t *testing.T, br *bridge, id, word string, start time.Time, limit time.Duration) (getNote, search time.Duration) {
	t.Helper()
	deadline := start.Add(limit + 20*time.Second) // past the limit only to report how late
	for getNote == 0 || search == 0 {
		if getNote == 0 {
			var n note
			if raw, derr := br.Try("get_note", map[string]any{"id": id}); derr == nil && json.Unmarshal(raw, &n) == nil && strings.Contains(n.Body, word) {
				getNote = time.Since(start)
			}
		}
		if search == 0 && br.Found(t, word, id) {
			search = time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("note %s not served by notebridge %s after the device's sync (get_note %s, search %s)", id, limit+20*time.Second, getNote, search)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if getNote > limit || search > limit {
		t.Errorf("note %s served after get_note %s, search %s: want within %s (one sync interval + 2 s)", id, getNote, search, limit)
	}
	return getNote, search
}

// writeAndWaitForSync creates a note through notebridge and waits for a
// bundled sync that started after it and completed.
func createThroughBridge(t *testing.T, br *bridge, notebookID, title, body string) string {
	t.Helper()
	var n note
	br.Call(t, "create_note", map[string]any{"notebook_id": notebookID, "title": title, "body": body}, &n)
	return n.ID
}

func syncedAfter(t *testing.T, j *bundled, at time.Time, timeout time.Duration) Status {
	t.Helper()
	return j.WaitStatus(t, timeout, "a sync started after "+at.Format(time.RFC3339Nano), func(s Status) bool {
		return s.State == StateIdle && s.LastAttemptAt != nil && s.LastAttemptAt.After(at) && s.LastSuccessAt != nil && !s.LastSuccessAt.Before(*s.LastAttemptAt)
	})
}

// deviceSees syncs the device until it shows the note's text, and returns
// how long after start that was.
func deviceSees(t *testing.T, dev *device, id, word string, start time.Time, timeout time.Duration, decrypt bool) time.Duration {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		cmds := []string{"sync"}
		if decrypt {
			cmds = append(cmds, "e2ee decrypt --force")
		}
		out := dev.Batch(t, append(cmds, "cat "+id)...)
		if strings.Contains(out, word) {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the device did not get note %s within %s:\n%s", id, timeout, out)
		}
	}
}

func newNotebook(t *testing.T, br *bridge, title string) string {
	t.Helper()
	var nb struct {
		ID string `json:"id"`
	}
	br.Call(t, "create_notebook", map[string]any{"title": title}, &nb)
	return nb.ID
}

// TestSyncWebDAVBothWaysAndOutage: (a) a note written on the device is
// served by notebridge (get_note, search) within one interval + 2 s of the
// device's sync; (b) a note written through notebridge reaches the device
// after the bundled Joplin's next sync; (e) the WebDAV server stopped
// during a sync: notebridge keeps serving reads, the status names the
// error and the setting, and the next sync after the server is back
// delivers what was written meanwhile.
func TestSyncWebDAVBothWaysAndOutage(t *testing.T) {
	engine(t)
	nw := newNetwork(t)
	dav := startWebDAV(t, nw, "joplin")
	const interval = 5 * time.Second
	j := startBundled(t, nw, webdavEnv("joplin", interval), map[string]string{secretPassword: davPass})
	st := j.WaitStatus(t, time.Minute, "the first sync", func(s Status) bool { return s.CompletedSyncs >= 1 })
	if st.Schema != 1 || st.Target != TargetWebDAV || st.IntervalSeconds != 5 || st.LastError != nil || st.E2EE.Enabled {
		t.Fatalf("status after the first sync: %+v", st)
	}
	br := startBridge(t, j)
	br.Call(t, "joplin_status", map[string]any{}, nil) // starts the search index
	dev := startDevice(t, nw, webdavSettings("joplin"))

	// (a) device → notebridge.
	word := marker(t, "phoneword")
	dev.Batch(t, "mkbook Phone", "use Phone", `mknote "From the phone"`, `set "From the phone" body "`+word+` written on the device"`)
	dev.Sync(t)
	synced := time.Now()
	id := fileWith(t, dav.Dir, word)
	getNote, search := arrival(t, br, id, word, synced, interval+2*time.Second)
	t.Logf("MEASURE device→notebridge (interval %s): get_note %s, search %s after the device's sync ended", interval, getNote.Round(time.Millisecond), search.Round(time.Millisecond))

	// (b) notebridge → device.
	nb := newNotebook(t, br, "From notebridge")
	word2 := marker(t, "agentword")
	wrote := time.Now()
	id2 := createThroughBridge(t, br, nb, "Written by the agent", word2+" from notebridge")
	syncedAfter(t, j, wrote, interval+30*time.Second)
	uploaded := time.Since(wrote)
	if out := dev.Sync(t, "cat "+id2); !strings.Contains(out, word2) {
		t.Fatalf("the device's first sync after the bundled sync lacks the note:\n%s", out)
	}
	t.Logf("MEASURE notebridge→device (interval %s): uploaded by the bundled Joplin %s after the write; on the device after its next sync %s",
		interval, uploaded.Round(time.Millisecond), time.Since(wrote).Round(time.Millisecond))

	// (e) the WebDAV server stops during a sync.
	before := j.Status(t)
	j.WaitStatus(t, interval+30*time.Second, "a sync running", func(s Status) bool { return s.State == StateSyncing })
	stop := 5 * time.Second
	if err := dav.C.Stop(t.Context(), &stop); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	readStart := time.Now()
	var n note
	br.Call(t, "get_note", map[string]any{"id": id}, &n)
	if !strings.Contains(n.Body, word) || time.Since(readStart) > 2*time.Second {
		t.Fatalf("get_note during the outage: %q after %s", n.Body, time.Since(readStart))
	}
	word3 := marker(t, "outageword")
	id3 := createThroughBridge(t, br, nb, "Written during the outage", word3)
	// A request in flight when the server vanished waits for Joplin's own
	// request timeout (about 90 s was seen), so the error can take that long.
	failed := j.WaitStatus(t, 4*time.Minute, "the outage reported", func(s Status) bool {
		return s.State == StateError && s.LastError != nil && s.ConsecutiveFailures >= 1
	})
	if failed.LastError.Code != CodeUnreachable || failed.LastError.Setting != envURL || failed.LastSuccessAt == nil {
		t.Fatalf("outage status: %+v %+v", failed, failed.LastError)
	}
	if strings.Contains(failed.LastError.Message, davPass) {
		t.Fatal("the status shows the WebDAV password")
	}
	t.Logf("MEASURE outage reported %s after the WebDAV server stopped: %s %s: %s", time.Since(stopped).Round(time.Millisecond),
		failed.LastError.Code, failed.LastError.Setting, failed.LastError.Message)
	for range 3 { // reads keep working while syncs fail
		br.Call(t, "get_note", map[string]any{"id": id3}, &n)
	}
	if err := dav.C.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	rec := j.WaitStatus(t, 3*time.Minute, "recovery", func(s Status) bool {
		return s.State == StateIdle && s.LastError == nil && s.LastSuccessAt != nil && s.LastSuccessAt.After(back)
	})
	if rec.ConsecutiveFailures != 0 || rec.CompletedSyncs <= before.CompletedSyncs {
		t.Fatalf("after recovery: %+v", rec)
	}
	t.Logf("recovered %s after the WebDAV server was back", time.Since(back).Round(time.Millisecond))
	if out := dev.Sync(t, "cat "+id3); !strings.Contains(out, word3) {
		t.Fatalf("the note written during the outage did not reach the device:\n%s", out)
	}
}

// TestSyncAfterABridgeWrite: with the sync state shared as compose shares
// it, a write through notebridge alone (no interval sync for an hour) asks
// for a sync, which the supervisor runs about 10 s later; the note is then
// on the person's device after its next sync. This is the delay a person
// sees between an agent's edit and their phone.
func TestSyncAfterABridgeWrite(t *testing.T) {
	engine(t)
	nw := newNetwork(t)
	startWebDAV(t, nw, "joplin")
	j := startBundled(t, nw, webdavEnv("joplin", time.Hour), map[string]string{secretPassword: davPass})
	j.WaitStatus(t, time.Minute, "the first sync", func(s Status) bool { return s.CompletedSyncs >= 1 && s.State == StateIdle })
	br := startBridge(t, j, "--sync-state-dir", j.StateDir)
	dev := startDevice(t, nw, webdavSettings("joplin"))
	dev.Sync(t)

	var status struct {
		Sync struct {
			Target string `json:"target"`
			State  string `json:"state"`
		} `json:"sync"`
	}
	br.Call(t, "joplin_status", map[string]any{}, &status)
	if status.Sync.Target != TargetWebDAV || status.Sync.State != StateIdle {
		t.Errorf("joplin_status sync = %+v, want webdav idle (read from status.json)", status.Sync)
	}

	nb := newNotebook(t, br, "Agent")
	word := marker(t, "requestword")
	wrote := time.Now()
	id := createThroughBridge(t, br, nb, "Asked to sync", word)
	st := syncedAfter(t, j, wrote, 40*time.Second)
	started := st.LastAttemptAt.Sub(wrote)
	if started < requestDebounce-time.Second || started > requestDebounce+5*time.Second {
		t.Errorf("the sync started %s after the write, want about %s (debounced request)", started, requestDebounce)
	}
	took := deviceSees(t, dev, id, word, wrote, time.Minute, false)
	t.Logf("MEASURE notebridge→device by request (interval 1h): the bundled sync started %s after the write; on the device %s after the write",
		started.Round(time.Millisecond), took.Round(time.Millisecond))
}

// TestSyncConflictKeepsBothVersions (d): the same note edited through
// notebridge and on the device between two syncs: the bundled Joplin keeps
// the device's version under the note's id and its own edit as a conflict
// copy; both are reachable. The syncs here are triggered by the request
// file only (the interval is an hour), so the debounce is measured on the
// real supervisor too.
func TestSyncConflictKeepsBothVersions(t *testing.T) {
	engine(t)
	nw := newNetwork(t)
	startWebDAV(t, nw, "joplin")
	j := startBundled(t, nw, webdavEnv("joplin", time.Hour), map[string]string{secretPassword: davPass})
	j.WaitStatus(t, time.Minute, "the first sync", func(s Status) bool { return s.CompletedSyncs >= 1 })
	br := startBridge(t, j)
	dev := startDevice(t, nw, webdavSettings("joplin"))

	nb := newNotebook(t, br, "Shared")
	id := createThroughBridge(t, br, nb, "Shopping", "original text")
	requested := time.Now()
	j.Request(t)
	st := syncedAfter(t, j, requested, 40*time.Second)
	if d := st.LastAttemptAt.Sub(requested); d < requestDebounce-time.Second || d > requestDebounce+5*time.Second {
		t.Errorf("the requested sync started %s after the request, want about %s", d, requestDebounce)
	}
	t.Logf("MEASURE request → sync start: %s (debounce %s)", st.LastAttemptAt.Sub(requested).Round(time.Millisecond), requestDebounce)
	if out := dev.Sync(t, "cat "+id); !strings.Contains(out, "original text") {
		t.Fatalf("the device lacks the note:\n%s", out)
	}

	// Both sides edit between syncs.
	br.Call(t, "update_note", map[string]any{"id": id, "body": "edited through notebridge"}, nil)
	dev.Batch(t, "set "+id+` body "edited on the device"`)
	dev.Sync(t)
	requested = time.Now()
	j.Request(t)
	syncedAfter(t, j, requested, 40*time.Second)

	var n note
	br.Call(t, "get_note", map[string]any{"id": id}, &n)
	if n.Body != "edited on the device" {
		t.Errorf("the note's id holds %q, want the device's version", n.Body)
	}
	var all struct {
		Items []struct {
			ID, Body           string
			IsConflict         int    `json:"is_conflict"`
			ConflictOriginalID string `json:"conflict_original_id"`
		} `json:"items"`
	}
	j.API(t, "/notes?include_conflicts=1&fields=id,body,is_conflict,conflict_original_id&limit=100", &all)
	conflictID := ""
	for _, it := range all.Items {
		if it.IsConflict == 1 && it.Body == "edited through notebridge" {
			conflictID = it.ID
			if it.ConflictOriginalID != "" && it.ConflictOriginalID != id {
				t.Errorf("conflict copy points at %s, want %s", it.ConflictOriginalID, id)
			}
		}
	}
	if conflictID == "" {
		t.Fatalf("no conflict copy holds notebridge's edit: %+v", all.Items)
	}
	br.Call(t, "get_note", map[string]any{"id": conflictID}, &n)
	if n.Body != "edited through notebridge" {
		t.Errorf("get_note of the conflict copy: %q", n.Body)
	}
	if out := dev.Sync(t, "cat "+id); !strings.Contains(out, "edited on the device") {
		t.Errorf("the device's note changed:\n%s", out)
	}
}

// TestSyncE2EE (c): the device encrypts its sync target; the bundled
// Joplin with the master password decrypts what arrives, and what
// notebridge writes is uploaded encrypted and decrypts on the device. With
// a wrong password the status says E2EE_WRONG_PASSWORD and nothing written
// through notebridge reaches the target in plain text.
func TestSyncE2EE(t *testing.T) {
	engine(t)
	nw := newNetwork(t)
	dav := startWebDAV(t, nw, "joplin")
	dev := startDevice(t, nw, webdavSettings("joplin"))
	const password = "correct horse battery staple"
	word := marker(t, "secretword")
	out := dev.Batch(t, "e2ee enable --password '"+password+"'", "mkbook Private", "use Private",
		`mknote "Diary"`, `set "Diary" body "`+word+` encrypted on the device"`, "sync", "e2ee status")
	if !strings.Contains(out, "Encryption is: Enabled") || strings.Contains(out, "Last error:") {
		t.Fatalf("device E2EE setup:\n%s", out)
	}
	if dav.Contains(t, word) {
		t.Fatal("the device uploaded its note in plain text")
	}

	const interval = 5 * time.Second
	j := startBundled(t, nw, webdavEnv("joplin", interval), map[string]string{secretPassword: davPass, secretMaster: password})
	st := j.WaitStatus(t, 2*time.Minute, "the first sync", func(s Status) bool { return s.CompletedSyncs >= 1 && s.State == StateIdle })
	if !st.E2EE.Enabled || !st.E2EE.MasterPasswordSet || st.E2EE.PasswordOK == nil || !*st.E2EE.PasswordOK {
		t.Fatalf("e2ee status: %+v", st.E2EE)
	}
	var notes struct {
		Items []struct{ ID, Title, Body string } `json:"items"`
	}
	j.API(t, "/notes?fields=id,title,body", &notes)
	id := ""
	for _, n := range notes.Items {
		if strings.Contains(n.Body, word) {
			id = n.ID
		}
	}
	if id == "" {
		t.Fatalf("the device's encrypted note was not decrypted: %+v", notes.Items)
	}
	br := startBridge(t, j)
	var n note
	br.Call(t, "get_note", map[string]any{"id": id}, &n)
	if n.Title != "Diary" || !strings.Contains(n.Body, word) {
		t.Fatalf("get_note: %+v", n)
	}

	nb := newNotebook(t, br, "Agent notes")
	word2 := marker(t, "agentsecret")
	wrote := time.Now()
	id2 := createThroughBridge(t, br, nb, "Agent summary", word2)
	syncedAfter(t, j, wrote, interval+30*time.Second)
	if !dav.hasFile(t, id2) {
		t.Fatalf("notebridge's note %s was not uploaded", id2)
	}
	if dav.Contains(t, word2) || dav.Contains(t, "Agent summary") {
		t.Fatal("notebridge's note reached the encrypted target in plain text")
	}
	took := deviceSees(t, dev, id2, word2, wrote, time.Minute, true)
	t.Logf("MEASURE notebridge→device with E2EE: %s", took.Round(time.Millisecond))

	// A second bundled Joplin with a wrong master password, alone on the
	// target (the first one stops: two clients syncing at once may wait
	// for each other's locks on the target).
	stop := 10 * time.Second
	if err := j.C.Stop(t.Context(), &stop); err != nil {
		t.Fatal(err)
	}
	j2 := startBundled(t, nw, webdavEnv("joplin", interval), map[string]string{secretPassword: davPass, secretMaster: "wrong password"})
	bad := j2.WaitStatus(t, 2*time.Minute, "the wrong password reported", func(s Status) bool {
		return s.LastError != nil && s.LastError.Code == CodeE2EEWrongPassword
	})
	if bad.State != StateError || bad.LastError.Setting != secretMaster || bad.E2EE.PasswordOK == nil || *bad.E2EE.PasswordOK {
		t.Fatalf("wrong password status: %+v %+v %+v", bad, bad.LastError, bad.E2EE)
	}
	if strings.Contains(bad.LastError.Message, "wrong password") {
		t.Fatal("the status shows the master password")
	}
	br2 := startBridge(t, j2)
	nb2 := newNotebook(t, br2, "Leak check")
	word3 := marker(t, "mustnotleak")
	wrote = time.Now()
	id3 := createThroughBridge(t, br2, nb2, "Leak check note", word3)
	j2.WaitStatus(t, time.Minute, "two syncs after the write", func(s Status) bool {
		return s.LastAttemptAt != nil && s.LastAttemptAt.After(wrote.Add(interval)) && s.State != StateSyncing
	})
	if dav.Contains(t, word3) || dav.Contains(t, "Leak check") || dav.hasFile(t, id3) {
		t.Fatal("with a wrong master password, a note went to the encrypted target")
	}
}

// hasFile reports whether the target holds an item file for id.
func (w *webDAV) hasFile(t *testing.T, id string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(w.Dir, "joplin", id+".md"))
	return err == nil
}

// TestSyncFolderTarget (f): the filesystem target, a host folder mounted
// into the bundled Joplin and the device: both ways, and a folder that
// becomes unwritable is reported with its setting and recovers.
func TestSyncFolderTarget(t *testing.T) {
	engine(t)
	nw := newNetwork(t)
	folder := ownedDir(t, 0o700)
	const interval = 5 * time.Second
	j := startBundled(t, nw, map[string]string{"NOTEBRIDGE_SYNC_TARGET": "filesystem", "NOTEBRIDGE_SYNC_INTERVAL": interval.String()},
		nil, folder+":/sync-folder")
	j.WaitStatus(t, time.Minute, "the first sync", func(s Status) bool { return s.CompletedSyncs >= 1 })
	br := startBridge(t, j)
	br.Call(t, "joplin_status", map[string]any{}, nil)
	dev := startDevice(t, nw, map[string]any{"sync.target": 2, "sync.2.path": "/sync-folder"}, folder+":/sync-folder")

	word := marker(t, "folderword")
	dev.Batch(t, "mkbook Laptop", "use Laptop", `mknote "From the laptop"`, `set "From the laptop" body "`+word+`"`)
	dev.Sync(t)
	synced := time.Now()
	id := fileWith(t, folder, word)
	getNote, search := arrival(t, br, id, word, synced, interval+2*time.Second)
	t.Logf("MEASURE folder device→notebridge: get_note %s, search %s", getNote.Round(time.Millisecond), search.Round(time.Millisecond))

	nb := newNotebook(t, br, "Agent")
	word2 := marker(t, "folderagent")
	wrote := time.Now()
	id2 := createThroughBridge(t, br, nb, "To the laptop", word2)
	syncedAfter(t, j, wrote, interval+30*time.Second)
	if out := dev.Sync(t, "cat "+id2); !strings.Contains(out, word2) {
		t.Fatalf("the device lacks notebridge's note:\n%s", out)
	}

	if err := os.Chmod(folder, 0o500); err != nil {
		t.Fatal(err)
	}
	id3 := createThroughBridge(t, br, nb, "While read-only", marker(t, "ro"))
	failed := j.WaitStatus(t, time.Minute, "the unwritable folder reported", func(s Status) bool { return s.State == StateError && s.LastError != nil })
	if failed.LastError.Code != CodeConfig || failed.LastError.Setting != envPath {
		t.Fatalf("unwritable folder: %+v", failed.LastError)
	}
	t.Logf("folder error: %s", failed.LastError.Message)
	br.Call(t, "get_note", map[string]any{"id": id}, nil)
	if err := os.Chmod(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	j.WaitStatus(t, 2*time.Minute, "recovery", func(s Status) bool {
		return s.State == StateIdle && s.LastSuccessAt != nil && s.LastSuccessAt.After(back)
	})
	if out := dev.Sync(t, "cat "+id3); !strings.Contains(out, "While read-only") {
		t.Fatalf("the note written while the folder was unwritable did not arrive:\n%s", out)
	}
}

// TestSyncBesideConcurrentWrites: the arrangement (sync in the same batch
// process as the Data API, deploy/joplin/VERIFIED.md) under Data API writes
// from two clients while a sync runs every second: every write is
// answered 200, the Data API never stops, and every note reaches the
// target.
func TestSyncBesideConcurrentWrites(t *testing.T) {
	engine(t)
	nw := newNetwork(t)
	dav := startWebDAV(t, nw, "joplin")
	j := startBundled(t, nw, webdavEnv("joplin", time.Second), map[string]string{secretPassword: davPass})
	j.WaitStatus(t, time.Minute, "the first sync", func(s Status) bool { return s.CompletedSyncs >= 1 })
	var folder struct{ ID string }
	post(t, j, "/folders", map[string]any{"title": "Stress"}, &folder)
	start := j.Status(t).CompletedSyncs
	// Two clients write for 15 s (creates, then an update of each note)
	// while the supervisor syncs every second.
	const writers, writeFor = 2, 15 * time.Second
	word := marker(t, "stress")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var writes int
	var failures []error
	began := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Since(began) < writeFor; i++ {
				var n struct{ ID string }
				err := apiWrite(j, http.MethodPost, "/notes", map[string]any{"title": fmt.Sprintf("stress note %d-%d", w, i), "body": "draft", "parent_id": folder.ID}, &n)
				if err == nil {
					err = apiWrite(j, http.MethodPut, "/notes/"+n.ID, map[string]any{"body": word}, nil)
				}
				mu.Lock()
				writes++
				if err != nil {
					failures = append(failures, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range failures {
		t.Error(err)
	}
	wrote := time.Since(began)
	done := time.Now()
	st := syncedAfter(t, j, done, 2*time.Minute)
	n := len(filesWith(dav.Dir, word, ".md"))
	if n != writes {
		t.Errorf("%d of %d notes reached the target with their update", n, writes)
	}
	if st.ConsecutiveFailures != 0 {
		t.Errorf("sync failures under load: %+v", st.LastError)
	}
	t.Logf("MEASURE %d notes created and updated (%d Data API writes, 0 failed) in %s during %d syncs; all on the target %s after the last write",
		writes, 2*writes, wrote.Round(time.Millisecond), st.CompletedSyncs-start, time.Since(done).Round(time.Millisecond))
}

func post(t *testing.T, j *bundled, path string, body, out any) {
	t.Helper()
	if err := apiWrite(j, http.MethodPost, path, body, out); err != nil {
		t.Fatal(err)
	}
}

// apiWrite sends one write to the bundled Joplin's Data API.
func apiWrite(j *bundled, method, path string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, j.URL+path+"?token="+apiToken, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// TestSyncConfigErrorKeepsServing: a configuration error (here a WebDAV
// target without its URL) is in the status, naming the setting, and the
// container keeps serving the Data API instead of exiting.
func TestSyncConfigErrorKeepsServing(t *testing.T) {
	engine(t)
	nw := newNetwork(t)
	j := startBundled(t, nw, map[string]string{"NOTEBRIDGE_SYNC_TARGET": "webdav", "NOTEBRIDGE_SYNC_USER": "me"},
		map[string]string{secretPassword: davPass})
	st := j.WaitStatus(t, time.Minute, "the configuration error", func(s Status) bool { return s.State == StateConfigError })
	if st.LastError == nil || st.LastError.Code != CodeConfig || st.LastError.Setting != envURL || st.CompletedSyncs != 0 {
		t.Fatalf("status: %+v %+v", st, st.LastError)
	}
	var notes struct {
		Items []json.RawMessage `json:"items"`
	}
	for range 3 {
		j.API(t, "/notes", &notes)
	}
	if state, err := j.C.State(t.Context()); err != nil || !state.Running || state.Restarting {
		t.Fatalf("container state %+v, %v", state, err)
	}
}
