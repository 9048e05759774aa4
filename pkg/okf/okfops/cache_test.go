package okfops

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/fwatch"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
	"golang.org/x/sys/unix"

	"github.com/notebridge/notebridge/pkg/internal/statkey"
)

// agedCache is a manifest cache whose clock runs an hour ahead, so every
// file a test writes is past the racy window and cached at once: only the
// stat key can then tell a changed file from an unchanged one.
func agedCache() *filecache.Cache {
	return filecache.New(filecache.Options{Clock: func() time.Time { return time.Now().Add(time.Hour) }})
}

// cachedFiles is how many files c holds for the bundle at dir.
func cachedFiles(t *testing.T, c *filecache.Cache, dir string) int {
	t.Helper()
	r, err := safefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return c.ForRoot(r).Len()
}

// rewrite replaces old by new (same length) in the file and restores its
// mtime to the nanosecond, after the file system clock has moved past the
// file's ctime: a same-size write in the "same second" that only the
// ctime (which no user can set) gives away.
func rewrite(t *testing.T, path, old, new string) {
	t.Helper()
	if len(old) != len(new) {
		t.Fatal("rewrite keeps the size")
	}
	raw, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(raw, []byte(old)) {
		t.Fatalf("%s lacks %q (%v)", path, old, err)
	}
	var before unix.Stat_t
	if err := unix.Stat(path, &before); err != nil {
		t.Fatal(err)
	}
	waitClockPast(t, before.Ctim)
	if err := os.WriteFile(path, bytes.Replace(raw, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(before.Mtim.Unix())
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	var after unix.Stat_t
	if err := unix.Stat(path, &after); err != nil {
		t.Fatal(err)
	}
	if after.Size != before.Size || after.Mtim != before.Mtim {
		t.Fatal("size or mtime moved")
	}
}

// waitClockPast returns once the file system stamps a new inode change
// later than ts (timestamps are coarse: a jiffy or so). It waits on the
// clock's own event, not on a fixed delay.
func waitClockPast(t *testing.T, ts unix.Timespec) {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "tick")
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(probe, &st); err != nil {
			t.Fatal(err)
		}
		if st.Ctim.Nano() > ts.Nano() {
			return
		}
	}
}

func titles(res map[string]any) map[string]string {
	out := map[string]string{}
	for _, c := range res["concepts"].([]any) {
		row := c.(map[string]any)
		title, _ := row["title"].(string)
		out[row["id"].(string)] = title
	}
	return out
}

// TestCachePagesRereadChangedFiles: list_concepts pages served from the
// cache see a file changed between pages, including a same-size write
// with the mtime put back, and a file deleted between pages.
func TestCachePagesRereadChangedFiles(t *testing.T) {
	c := agedCache()
	h := newHarness(t, Config{Cache: c})
	dir := ownBundle(t, instantBundle)
	page := func(offset int) map[string]any {
		return h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 5, "offset": offset})
	}
	first := page(0)
	total := int(first["total"].(float64))
	if n := cachedFiles(t, c, dir); n != total {
		t.Fatalf("cache holds %d files after a full scan of %d concepts", n, total)
	}

	rewrite(t, filepath.Join(dir, "metrics/bookings.md"), "title: Bookings", "title: Bookingz")
	all := titles(h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 1000}))
	if all["metrics/bookings"] != "Bookingz" {
		t.Fatalf("same-size same-mtime change not re-read: title %q", all["metrics/bookings"])
	}

	if err := os.Remove(filepath.Join(dir, "policies/booking-recognition.md")); err != nil {
		t.Fatal(err)
	}
	next := page(5)
	if got := int(next["total"].(float64)); got != total-1 {
		t.Fatalf("total after a delete = %d, want %d", got, total-1)
	}
	if _, ok := titles(h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 1000}))["policies/booking-recognition"]; ok {
		t.Fatal("a deleted concept is still listed")
	}
	if n := cachedFiles(t, c, dir); n != total-1 {
		t.Fatalf("cache holds %d files, want the %d concepts left", n, total-1)
	}
}

// TestCacheValidateSearchNeighborsSeeChanges: the other cached reads see a
// same-size, same-mtime change too.
func TestCacheValidateSearchNeighborsSeeChanges(t *testing.T) {
	c := agedCache()
	h := newHarness(t, Config{Cache: c})
	dir := ownBundle(t, instantBundle)
	val := func() float64 {
		return h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})["errors"].(float64)
	}
	search := func(q string) int {
		return len(h.mustCall(t, "search_concepts", map[string]any{"bundle_path": dir, "query": q})["hits"].([]any))
	}
	inLinks := func() map[string]bool {
		res := h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings"})
		out := map[string]bool{}
		for _, l := range res["in"].([]any) {
			out[l.(map[string]any)["concept_id"].(string)] = true
		}
		return out
	}
	errs0, in0 := val(), inLinks()
	if search("Bookingz") != 0 || !in0["tables/rentals"] {
		t.Fatalf("fixture changed: in-links %v", in0)
	}

	rewrite(t, filepath.Join(dir, "metrics/bookings.md"), "title: Bookings", "title: Bookingz")
	if search("Bookingz") != 1 {
		t.Fatal("search_concepts served a stale title")
	}
	rewrite(t, filepath.Join(dir, "tables/rentals.md"), "../metrics/bookings.md", "../metrics/bookingz.md")
	if inLinks()["tables/rentals"] {
		t.Fatal("get_neighbors served a stale link")
	}
	if err := os.Remove(filepath.Join(dir, "policies/booking-recognition.md")); err != nil {
		t.Fatal(err)
	}
	if inLinks()["policies/booking-recognition"] {
		t.Fatal("a deleted concept still links in")
	}
	rewrite(t, filepath.Join(dir, "metrics/bookings.md"), "title: Bookingz", "title: [ookingz")
	if val() <= errs0 {
		t.Fatal("validate_bundle served a stale verdict")
	}
}

// TestWriteDoesNotTrustAStaleDigest: a cache that lies about a file's
// digest under its current stat cannot make a write overwrite that file:
// the commit re-hashes every file it replaces and refuses.
func TestWriteDoesNotTrustAStaleDigest(t *testing.T) {
	c := agedCache()
	h := newHarness(t, Config{Cache: c})
	dir := ownBundle(t, instantBundle)
	rel := "metrics/bookings.md"
	r, err := safefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := c.ForRoot(r)
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dir, rel), &st); err != nil {
		t.Fatal(err)
	}
	b.Put(rel, statkey.Of(&st), filecache.Digest, "0000000000000000000000000000000000000000000000000000000000000000", b.Now())
	before, _ := os.ReadFile(filepath.Join(dir, rel))
	_, derr := h.call(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings",
		"content": "---\ntype: Metric\ntitle: New\nstale_after: 2027-01-01T00:00:00Z\n---\n"})
	wantCode(t, derr, domainerr.RevisionConflict)
	if after, _ := os.ReadFile(filepath.Join(dir, rel)); !bytes.Equal(before, after) {
		t.Fatal("a write trusted a stale cached digest")
	}
}

// TestCacheConcurrentReadsAndWrites is for -race: cached reads of one
// bundle run while writes change it.
func TestCacheConcurrentReadsAndWrites(t *testing.T) {
	c := agedCache()
	h := newHarness(t, Config{Cache: c})
	dir := ownBundle(t, instantBundle)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				switch (g + i) % 4 {
				case 0:
					h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 3, "offset": i})
				case 1:
					h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
				case 2:
					h.mustCall(t, "search_concepts", map[string]any{"bundle_path": dir, "query": "booking"})
				case 3:
					h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings"})
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 3 {
			h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/extra",
				"content": "---\ntype: Metric\ntitle: Extra " + string(rune('a'+i)) + "\n---\n"})
		}
	}()
	wg.Wait()
	all := titles(h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 1000}))
	if all["metrics/extra"] != "Extra c" {
		t.Fatalf("last write not listed: %q", all["metrics/extra"])
	}
}

// TestCacheListingReusedUntilAChange: once a listing is watched, later
// pages reuse it without a walk, and any change under the bundle (a new
// directory and a concept in it, an emptied directory refilled) ends the
// reuse before the next page.
func TestCacheListingReusedUntilAChange(t *testing.T) {
	c := agedCache()
	h := newHarness(t, Config{Cache: c})
	dir := ownBundle(t, instantBundle)
	r, err := safefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !fwatch.Supported(r.FD()) {
		t.Skipf("%s is not on a filesystem that reports every change to inotify", dir)
	}
	listed := func() map[string]string {
		return titles(h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir, "limit": 1000}))
	}
	reused := func() bool { _, ok := c.ForRoot(r).Listing(); return ok }
	before := listed()
	if !reused() {
		t.Fatal("a listing of a bundle on a local filesystem is not kept")
	}
	if err := os.MkdirAll(filepath.Join(dir, "fresh", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if reused() {
		t.Fatal("the listing is still reused after a directory was created")
	}
	listed() // watches fresh/ and fresh/deeper/, both empty
	if !reused() {
		t.Fatal("the listing is not kept after the walk")
	}
	content := "---\ntype: Metric\ntitle: Deep\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "fresh", "deeper", "deep.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	after := listed()
	if after["fresh/deeper/deep"] != "Deep" || len(after) != len(before)+1 {
		t.Fatalf("a concept written into a directory created after the listing is missing: %v", after)
	}
}
