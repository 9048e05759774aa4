package okfops

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// TestInertAcrossWorkflows: a patch that writes sources, an executor and
// an attester pointing at a local HTTP probe and a marker file, and a
// migration whose citations are probe URLs, are previewed and applied
// without a single fetch, without the marker being opened for writing or
// touched, and without the probe URL or body text reaching the log (even
// when an apply fails with an internal error, which the executor logs).
func TestInertAcrossWorkflows(t *testing.T) {
	var hits atomic.Int64
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer probe.Close()
	markerDir := t.TempDir()
	marker := filepath.Join(markerDir, "marker")
	if err := os.WriteFile(marker, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(marker, old, old); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(markerDir, "pwned")
	const canary = "INERT-BODY-CANARY"

	hook := &faultHook{}
	h := newHarness(t, Config{StoreHook: hook.hook})
	// failOnce makes the next apply fail before its point of no return
	// with a non-domain error, which the executor logs.
	failOnce := func(name string, args map[string]any) {
		t.Helper()
		hook.arm("staged", func() error { return errors.New("disk on fire") })
		raw, _ := json.Marshal(args)
		if _, derr := h.ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, raw); derr == nil || derr.Code != domainerr.Internal {
			t.Fatalf("%s with a failing store: %v, want INTERNAL", name, derr)
		}
	}

	t.Run("concept patch", func(t *testing.T) {
		dir := ownBundle(t, instantBundle)
		args := patchArgs(dir,
			map[string]any{"op": "put_source", "concept_id": "metrics/bookings", "source": map[string]any{
				"id": "probe", "resource": probe.URL + "/source", "title": canary + " $(touch " + pwned + ")"}},
			map[string]any{"op": "put_attested_computation", "concept_id": "computations/bookings-quarter", "runtime": "python",
				"computation": marker,
				"executor":    map[string]any{"resource": probe.URL + "/executor", "receipt": []any{"job_id", "$(touch " + pwned + ")"}},
				"attester":    map[string]any{"resource": "file://" + marker}},
		)
		prev := h.mustCall(t, "preview_concept_patch", args)
		if prev["status"] != "applicable" {
			t.Fatalf("preview: %v", prev)
		}
		failOnce("apply_concept_patch", applyArgs(prev, args))
		if res := h.mustCall(t, "apply_concept_patch", applyArgs(prev, args)); res["status"] != "applied" {
			t.Fatalf("apply: %v", res)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "computations/bookings-quarter.md"))
		for _, want := range []string{probe.URL + "/executor", "file://" + marker, "computation: " + marker} {
			if !strings.Contains(string(got), want) {
				t.Fatalf("the reference %q was not stored as data:\n%s", want, got)
			}
		}
		read := h.mustCall(t, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "computations/bookings-quarter"})
		if ex := read["projection"].(map[string]any)["executor"].(map[string]any); ex["resource"] != probe.URL+"/executor" {
			t.Fatalf("executor projection: %v", ex)
		}
		h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
		h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": "metrics/bookings"})
	})

	t.Run("v02 migration", func(t *testing.T) {
		dir := ownBundle(t, v01Bundle)
		concept := "---\ntype: Reference\ntitle: Probe\nresource: " + probe.URL + "/resource\ntimestamp: '2026-05-28T22:50:09+00:00'\n---\n\n" +
			canary + " see [1] and [2].\n\n```sh\ntouch " + pwned + "\ncurl " + probe.URL + "/body\n```\n\n" +
			"# Citations\n[1] " + probe.URL + "/citation-a\n[2] [Probe doc](" + probe.URL + "/citation-b)\n"
		if err := os.WriteFile(filepath.Join(dir, "references/probe.md"), []byte(concept), 0o644); err != nil {
			t.Fatal(err)
		}
		prev, args := migrateFully(t, h, dir)
		failOnce("apply_v02_migration", migrateApply(prev, args))
		if res := h.mustCall(t, "apply_v02_migration", migrateApply(prev, args)); res["status"] != "applied" {
			t.Fatalf("apply: %v", res)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "references/probe.md"))
		for _, want := range []string{"resource: " + probe.URL + "/citation-a", "resource: " + probe.URL + "/citation-b", "[^", canary} {
			if !strings.Contains(string(got), want) {
				t.Fatalf("the migrated concept lacks %q:\n%s", want, got)
			}
		}
		h.mustCall(t, "validate_bundle", map[string]any{"bundle_path": dir})
		h.mustCall(t, "get_neighbors", map[string]any{"bundle_path": dir, "concept_id": "references/probe"})
	})

	if n := hits.Load(); n != 0 {
		t.Fatalf("the HTTP probe was fetched %d times", n)
	}
	if _, err := os.Lstat(pwned); !os.IsNotExist(err) {
		t.Fatal("a command from the data was executed")
	}
	st, err := os.Stat(marker)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(marker); string(b) != "untouched" || !st.ModTime().Equal(old) {
		t.Fatal("the marker file was modified")
	}
	if entries, _ := os.ReadDir(markerDir); len(entries) != 1 {
		t.Fatalf("something was created next to the marker: %d entries", len(entries))
	}
	log := h.log.String()
	if !strings.Contains(log, "operation failed") {
		t.Fatalf("the failing applies were not logged, so the log check below proves nothing:\n%s", log)
	}
	for _, secret := range []string{probe.URL, strings.TrimPrefix(probe.URL, "http://"), canary, marker, "touch"} {
		if strings.Contains(log, secret) {
			t.Fatalf("the log contains %q:\n%s", secret, log)
		}
	}
}
