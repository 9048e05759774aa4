package okfops

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestSymlinkMatrix: symlinked bundle paths, ancestors, files and
// directories are refused by every operation, with no absolute path in the
// error, and nothing is written through them.
func TestSymlinkMatrix(t *testing.T) {
	h := newHarness(t, Config{})
	base := t.TempDir()
	real := ownBundle(t, instantBundle)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("---\ntype: Secret\n---\nDO-NOT-READ\n"), 0o644)

	linkRoot := filepath.Join(base, "bundle-link")
	os.Symlink(real, linkRoot)
	ancestor := filepath.Join(base, "anc-link")
	os.Symlink(filepath.Dir(real), ancestor)

	withFile := ownBundle(t, instantBundle)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(withFile, "metrics/leak.md"))
	withDir := ownBundle(t, instantBundle)
	os.Symlink(outside, filepath.Join(withDir, "linked"))

	type call struct {
		name string
		args map[string]any
	}
	calls := func(dir, id string) []call {
		return []call{
			{"list_concepts", map[string]any{"bundle_path": dir}},
			{"read_concept", map[string]any{"bundle_path": dir, "concept_id": id}},
			{"search_concepts", map[string]any{"bundle_path": dir, "query": "DO-NOT-READ"}},
			{"get_neighbors", map[string]any{"bundle_path": dir, "concept_id": id}},
			{"validate_bundle", map[string]any{"bundle_path": dir}},
			{"write_concept", map[string]any{"bundle_path": dir, "concept_id": id, "content": "---\ntype: A\n---\n"}},
		}
	}
	cases := []struct {
		name, dir, id string
	}{
		{"symlinked bundle path", linkRoot, "metrics/bookings"},
		{"symlinked ancestor", filepath.Join(ancestor, filepath.Base(real)), "metrics/bookings"},
		{"symlinked file inside", withFile, "metrics/leak"},
		{"symlinked directory inside", withDir, "linked/secret"},
	}
	for _, c := range cases {
		for _, cl := range calls(c.dir, c.id) {
			t.Run(c.name+"/"+cl.name, func(t *testing.T) {
				_, derr := h.call(t, cl.name, cl.args)
				wantCode(t, derr, "PATH_REJECTED")
				if strings.Contains(derr.Message, base) || strings.Contains(derr.Message, outside) || strings.Contains(derr.Message, "/tmp") {
					t.Fatalf("error leaks an absolute path: %q", derr.Message)
				}
			})
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.md")); !strings.Contains(string(b), "DO-NOT-READ") {
		t.Fatal("the symlink target was modified")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("something was written through a symlink: %d entries", len(entries))
	}
}

// TestSwapAfterCheck: a directory swapped for a symlink between two
// operations is caught by the next one.
func TestSwapAfterCheck(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, instantBundle)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "bookings.md"), []byte("---\ntype: Evil\n---\n"), 0o644)
	h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings"})
	os.Rename(filepath.Join(dir, "metrics"), filepath.Join(t.TempDir(), "moved"))
	os.Symlink(outside, filepath.Join(dir, "metrics"))
	_, derr := h.call(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings"})
	wantCode(t, derr, "PATH_REJECTED")
	_, derr = h.call(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings", "content": "---\ntype: Metric\n---\n"})
	wantCode(t, derr, "PATH_REJECTED")
	if b, _ := os.ReadFile(filepath.Join(outside, "bookings.md")); string(b) != "---\ntype: Evil\n---\n" {
		t.Fatal("write went through the swapped-in symlink")
	}
}

// TestInertData: documents whose resources, executors, attesters and
// sources name a local HTTP probe, a marker file and shell snippets are
// listed, read, searched, linked, validated and rewritten without any of
// them being fetched, opened or run.
func TestInertData(t *testing.T) {
	var hits atomic.Int64
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer probe.Close()
	markerDir := t.TempDir()
	marker := filepath.Join(markerDir, "marker")
	os.WriteFile(marker, []byte("untouched"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(marker, old, old)
	pwned := filepath.Join(markerDir, "pwned")

	dir := t.TempDir()
	doc := "---\ntype: Attested Computation\nruntime: python\nresource: " + probe.URL + "/resource\n" +
		"computation: " + marker + "\n" +
		"executor:\n  resource: \"$(touch " + pwned + ")\"\n  receipt: [job_id]\n" +
		"attester:\n  resource: file://" + marker + "\n" +
		"sources:\n  - id: s\n    resource: " + probe.URL + "/source\n" +
		"---\n\n# Computation\n\n```sh\ntouch " + pwned + "\ncurl " + probe.URL + "/body\n```\n\nSee [probe](" + probe.URL + "/link) and [marker](file://" + marker + ").[^s]\n\n[^s]: Probe.\n"
	os.WriteFile(filepath.Join(dir, "comp.md"), []byte(doc), 0o644)

	h := newHarness(t, Config{})
	h.mustCall(t, "list_concepts", map[string]any{"bundle_path": dir})
	h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "comp"})
	h.mustCall(t, "search_concepts", map[string]any{"bundle_path": dir, "query": "touch"})
	h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": "comp"})
	h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
	h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "comp2", "content": doc})

	if n := hits.Load(); n != 0 {
		t.Fatalf("the HTTP probe was fetched %d times", n)
	}
	if _, err := os.Stat(pwned); !os.IsNotExist(err) {
		t.Fatal("a document's command was executed")
	}
	st, _ := os.Stat(marker)
	if b, _ := os.ReadFile(marker); string(b) != "untouched" || !st.ModTime().Equal(old) {
		t.Fatal("the marker file was modified")
	}
	if strings.Contains(h.log.String(), "touch") || strings.Contains(h.log.String(), probe.URL) {
		t.Fatalf("logs contain document content:\n%s", h.log.String())
	}
}
