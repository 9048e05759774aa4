package okfops

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// faultHook is a Config.StoreHook that runs an action once, at one step.
type faultHook struct {
	mu     sync.Mutex
	step   string
	action func() error
}

func (f *faultHook) arm(step string, action func() error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.step, f.action = step, action
}

func (f *faultHook) hook(step string) error {
	f.mu.Lock()
	action := f.action
	if step != f.step || action == nil {
		f.mu.Unlock()
		return nil
	}
	f.action = nil // fire once: recovery in the retry runs the steps again
	f.mu.Unlock()
	return action()
}

// callCtx runs an operation with the caller's context.
func (h *harness) callCtx(t *testing.T, ctx context.Context, name string, args map[string]any) (map[string]any, *domainerr.Error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	out, derr := h.ex.Call(ctx, principal.Stdio(), registry.MCPStdio, name, raw)
	if derr != nil {
		if derr.Code == domainerr.Internal {
			t.Fatalf("%s: internal error: %v", name, derr)
		}
		return nil, derr
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

// outcomeFlow is one preview/apply workflow over a fixture copy.
type outcomeFlow struct {
	name, fixture, apply string
	// prepare previews dir and returns the preview and the identical
	// apply's arguments.
	prepare func(t *testing.T, h *harness, dir string) (prev, apply map[string]any)
	// unrelated is a file the workflow neither reads for its change nor
	// writes; external holds what an external writer puts there.
	unrelated, external string
}

var outcomeFlows = []outcomeFlow{
	{
		name: "concept_patch", fixture: instantBundle, apply: "apply_concept_patch",
		prepare: func(t *testing.T, h *harness, dir string) (map[string]any, map[string]any) {
			args := patchArgs(dir, tenOps...)
			prev := h.mustCall(t, "preview_concept_patch", args)
			if prev["status"] != "applicable" {
				t.Fatalf("preview: %v", prev)
			}
			return prev, applyArgs(prev, args)
		},
		unrelated: "tables/rentals.md",
	},
	{
		name: "v02_migration", fixture: v01Bundle, apply: "apply_v02_migration",
		prepare: func(t *testing.T, h *harness, dir string) (map[string]any, map[string]any) {
			prev, args := migrateFully(t, h, dir)
			return prev, migrateApply(prev, args)
		},
		unrelated: "notes/external.md",
		external:  "---\ntype: Note\ntitle: External\n---\n\nWritten by another process.\n",
	},
}

func wantRetryable(t *testing.T, derr *domainerr.Error, code domainerr.Code, retryable bool) {
	t.Helper()
	wantCode(t, derr, code)
	if derr.Retryable != retryable {
		t.Fatalf("%s retryable = %v, want %v", code, derr.Retryable, retryable)
	}
}

func okfExists(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".okf"))
	return err == nil
}

func sortedPaths(v any) []string {
	var out []string
	for _, p := range v.([]any) {
		out = append(out, p.(string))
	}
	sort.Strings(out)
	return out
}

// TestApplyOutcomes drives every outcome of apply_concept_patch and
// apply_v02_migration: applied, replayed (also after the revision moved),
// a foreign receipt, plan mismatch, revision conflict (an external
// writer), cancellation before the point of no return, and failures after
// it (uncertain outcome, then replay) and after the receipt (success).
func TestApplyOutcomes(t *testing.T) {
	for _, f := range outcomeFlows {
		t.Run(f.name, func(t *testing.T) {
			hook := &faultHook{}
			h := newHarness(t, Config{StoreHook: hook.hook})
			disarm := func(t *testing.T) { t.Cleanup(func() { hook.arm("", nil) }) }
			fresh := func(t *testing.T) (string, map[string]any, map[string]any) {
				dir := ownBundle(t, f.fixture)
				prev, args := f.prepare(t, h, dir)
				return dir, prev, args
			}
			refDir, refPrev, refArgs := fresh(t)
			base := visibleTree(t, refDir)
			ref := h.mustCall(t, f.apply, refArgs)
			result := visibleTree(t, refDir)
			if treeDiff(base, result) == "" {
				t.Fatal("the apply changed nothing")
			}

			t.Run("applied", func(t *testing.T) {
				if ref["status"] != "applied" || ref["change_id"] != refPrev["plan_digest"] || ref["result_revision"] != refPrev["result_revision"] ||
					ref["base_revision"] != refPrev["base_revision"] || ref["actor"] != Actor || ref["committed_at"] == "" {
					t.Fatalf("apply: %v\npreview: %v", ref, bindingOnly(refPrev))
				}
				if got, want := sortedPaths(ref["affected_paths"]), sortedPaths(refPrev["affected_paths"]); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("affected paths %v, preview said %v", got, want)
				}
				if _, err := os.Stat(filepath.Join(refDir, ".okf/receipts", ref["idempotency_key"].(string)+".json")); err != nil {
					t.Fatalf("no durable receipt: %v", err)
				}
			})

			t.Run("replayed", func(t *testing.T) {
				dir, _, args := fresh(t)
				first := h.mustCall(t, f.apply, args)
				snap := snapshotTree(t, dir)
				again := h.mustCall(t, f.apply, args)
				if again["status"] != "replayed" || again["change_id"] != first["change_id"] || again["idempotency_key"] != first["idempotency_key"] ||
					again["committed_at"] != first["committed_at"] || again["result_revision"] != first["result_revision"] {
					t.Fatalf("replay: %v\nfirst: %v", again, first)
				}
				if !sameSnapshot(snap, snapshotTree(t, dir)) {
					t.Fatal("the replay wrote something")
				}
			})

			t.Run("replayed after the revision moved", func(t *testing.T) {
				dir, _, args := fresh(t)
				first := h.mustCall(t, f.apply, args)
				other := "---\ntype: Metric\ntitle: Extra\n---\n\nWritten after the apply.\n"
				h.mustCall(t, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "notes/extra", "content": other})
				snap := snapshotTree(t, dir)
				again := h.mustCall(t, f.apply, args)
				if again["status"] != "replayed" || again["change_id"] != first["change_id"] {
					t.Fatalf("replay after the revision moved: %v", again)
				}
				if !sameSnapshot(snap, snapshotTree(t, dir)) {
					t.Fatal("the replay wrote something")
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "notes/extra.md")); string(b) != other {
					t.Fatal("the later change was lost")
				}
			})

			t.Run("foreign receipt", func(t *testing.T) {
				dir, _, args := fresh(t)
				first := h.mustCall(t, f.apply, args)
				p := filepath.Join(dir, ".okf/receipts", first["idempotency_key"].(string)+".json")
				raw, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				var rec map[string]any
				if err := json.Unmarshal(raw, &rec); err != nil {
					t.Fatal(err)
				}
				if rec["request_digest"] == nil || rec["idempotency_key"] != first["idempotency_key"] {
					t.Fatalf("unexpected receipt: %s", raw)
				}
				rec["request_digest"] = "sha256:" + strings.Repeat("f", 64)
				raw, _ = json.Marshal(rec)
				if err := os.WriteFile(p, raw, 0o600); err != nil {
					t.Fatal(err)
				}
				snap := snapshotTree(t, dir)
				_, derr := h.call(t, f.apply, args)
				wantRetryable(t, derr, domainerr.ReceiptConflict, false)
				if !sameSnapshot(snap, snapshotTree(t, dir)) {
					t.Fatal("a receipt conflict wrote something")
				}
			})

			t.Run("plan mismatch", func(t *testing.T) {
				dir, prev, args := fresh(t)
				snap := snapshotTree(t, dir)
				var variants map[string]map[string]any
				tampered := func(mut func(m map[string]any)) map[string]any {
					m := map[string]any{}
					raw, _ := json.Marshal(args)
					json.Unmarshal(raw, &m)
					mut(m)
					return m
				}
				flip := func(d string) string {
					if strings.HasSuffix(d, "0") {
						return d[:len(d)-1] + "1"
					}
					return d[:len(d)-1] + "0"
				}
				if f.name == "concept_patch" {
					variants = map[string]map[string]any{
						"different operations": tampered(func(m map[string]any) {
							m["operations"] = m["operations"].([]any)[:9] // without set_bundle_version
						}),
						"different operation value": tampered(func(m map[string]any) {
							m["operations"].([]any)[0].(map[string]any)["at"] = "2026-08-01T10:00:01Z"
						}),
						"tampered digest": tampered(func(m map[string]any) {
							m["expected_plan_digest"] = flip(m["expected_plan_digest"].(string))
						}),
					}
				} else {
					other := migrateArgs(dir, args["citation_mappings"].([]any))
					other["generated_by"] = "process:someone-else"
					otherPrev := h.mustCall(t, "preview_v02_migration", other)
					variants = map[string]map[string]any{
						"different generated_by": tampered(func(m map[string]any) {
							m["generated_by"] = "process:someone-else"
						}),
						"different generated_by with its own proof": tampered(func(m map[string]any) {
							m["generated_by"] = "process:someone-else"
							m["proof"] = otherPrev["proof"]
						}),
						"tampered digest": tampered(func(m map[string]any) {
							m["expected_plan_digest"] = flip(m["expected_plan_digest"].(string))
						}),
						"tampered expected_source": tampered(func(m map[string]any) {
							m["expected_source"].(map[string]any)["legacy_concepts"] = m["expected_source"].(map[string]any)["legacy_concepts"].(float64) + 1
						}),
						"tampered proof result": tampered(func(m map[string]any) {
							m["proof"].(map[string]any)["result_revision"] = prev["base_revision"]
						}),
						"tampered proof request digest": tampered(func(m map[string]any) {
							m["proof"].(map[string]any)["request_digest"] = flip(m["proof"].(map[string]any)["request_digest"].(string))
						}),
					}
				}
				for name, v := range variants {
					_, derr := h.call(t, f.apply, v)
					if derr == nil || derr.Code != domainerr.PlanMismatch || derr.Retryable {
						t.Fatalf("%s: got %v, want PLAN_MISMATCH", name, derr)
					}
					if !sameSnapshot(snap, snapshotTree(t, dir)) || okfExists(dir) {
						t.Fatalf("%s: a mismatched apply wrote something", name)
					}
				}
				// The genuine apply is unaffected by the refused ones.
				if res := h.mustCall(t, f.apply, args); res["status"] != "applied" {
					t.Fatalf("genuine apply: %v", res)
				}
			})

			t.Run("revision conflict", func(t *testing.T) {
				dir, _, args := fresh(t)
				target := filepath.Join(dir, f.unrelated)
				external := f.external
				if external == "" {
					// Same size as the original, so only the content moves.
					orig, err := os.ReadFile(target)
					if err != nil {
						t.Fatal(err)
					}
					external = strings.Replace(string(orig), "Rentals", "Rentalz", 1)
					if external == string(orig) || len(external) != len(orig) {
						t.Fatal("could not make a same-size external change")
					}
				}
				if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target, []byte(external), 0o644); err != nil {
					t.Fatal(err)
				}
				before := visibleTree(t, dir)
				_, derr := h.call(t, f.apply, args)
				wantRetryable(t, derr, domainerr.RevisionConflict, true)
				if p := treeDiff(before, visibleTree(t, dir)); p != "" {
					t.Fatalf("a conflicting apply changed %s", p)
				}
				// Preview again: the reviewed plan now applies and keeps the
				// external change.
				prev2, args2 := f.prepare(t, h, dir)
				if prev2["base_revision"] == args["expected_revision"] {
					t.Fatal("the new preview did not see the external change")
				}
				if res := h.mustCall(t, f.apply, args2); res["status"] != "applied" {
					t.Fatalf("apply after the new preview: %v", res)
				}
				if b, _ := os.ReadFile(target); string(b) != external {
					t.Fatal("the external write was overwritten")
				}
			})

			t.Run("cancelled before the point of no return", func(t *testing.T) {
				dir, _, args := fresh(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				disarm(t)
				hook.arm("staged", func() error { cancel(); return nil })
				_, derr := h.callCtx(t, ctx, f.apply, args)
				wantRetryable(t, derr, domainerr.Cancelled, true)
				if p := treeDiff(base, visibleTree(t, dir)); p != "" {
					t.Fatalf("a cancelled apply changed %s", p)
				}
				if hasJournal(dir) {
					t.Fatal("a cancelled apply left a journal")
				}
				res := h.mustCall(t, f.apply, args)
				if res["status"] != "applied" {
					t.Fatalf("the apply after a cancellation: %v", res)
				}
				if p := treeDiff(result, visibleTree(t, dir)); p != "" {
					t.Fatalf("after the apply %s is not at the result", p)
				}
			})

			boom := errors.New("disk on fire")
			for _, c := range []struct {
				step     string
				atResult bool // whether the bundle is at its result right after the failure
			}{{"apply:0", false}, {"verified", true}} {
				t.Run("failure after the point of no return at "+c.step, func(t *testing.T) {
					dir, _, args := fresh(t)
					disarm(t)
					hook.arm(c.step, func() error { return boom })
					_, derr := h.call(t, f.apply, args)
					wantRetryable(t, derr, domainerr.WriteOutcomeUnknown, false)
					want := base
					if c.atResult {
						want = result
					}
					if p := treeDiff(want, visibleTree(t, dir)); p != "" {
						t.Fatalf("right after the failure %s is not where expected", p)
					}
					if !hasJournal(dir) {
						t.Fatal("no journal to recover from")
					}
					res := h.mustCall(t, f.apply, args)
					if res["status"] != "replayed" || res["change_id"] != refPrev["plan_digest"] {
						t.Fatalf("the identical retry: %v", res)
					}
					if p := treeDiff(result, visibleTree(t, dir)); p != "" {
						t.Fatalf("after the retry %s is not at the result", p)
					}
					if hasJournal(dir) {
						t.Fatal("the journal was left behind")
					}
				})
			}

			t.Run("failure after the receipt", func(t *testing.T) {
				dir, _, args := fresh(t)
				disarm(t)
				hook.arm("receipted", func() error { return boom })
				res := h.mustCall(t, f.apply, args)
				if res["status"] != "applied" {
					t.Fatalf("a failure after the durable receipt must be success: %v", res)
				}
				if p := treeDiff(result, visibleTree(t, dir)); p != "" {
					t.Fatalf("%s is not at the result", p)
				}
				if again := h.mustCall(t, f.apply, args); again["status"] != "replayed" || again["committed_at"] != res["committed_at"] {
					t.Fatalf("retry: %v", again)
				}
			})
		})
	}
}

// TestApplyRevisionConflictDespiteDigestCache: an external same-size write
// that restores the file's mtime, made after the preview cached every
// digest (files older than the cache's racy window), is still a revision
// conflict, and the external content survives.
func TestApplyRevisionConflictDespiteDigestCache(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, instantBundle)
	time.Sleep(2100 * time.Millisecond) // past the digest cache's racy window
	args := patchArgs(dir, tenOps...)
	prev := h.mustCall(t, "preview_concept_patch", args)
	target := filepath.Join(dir, "tables/rentals.md")
	st, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(target)
	external := strings.Replace(string(orig), "Rentals", "Rentalz", 1)
	if err := os.WriteFile(target, []byte(external), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(target, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	_, derr := h.call(t, "apply_concept_patch", applyArgs(prev, args))
	wantRetryable(t, derr, domainerr.RevisionConflict, true)
	if b, _ := os.ReadFile(target); string(b) != external {
		t.Fatal("the external write was overwritten")
	}
}

// TestPatchNoop: operations that change nothing preview as noop with no
// digest; no apply of them can write, not even .okf/.
func TestPatchNoop(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, instantBundle)
	args := patchArgs(dir,
		map[string]any{"op": "set_lifecycle", "concept_id": "metrics/bookings", "status": "stable"},
		map[string]any{"op": "set_generated", "concept_id": "metrics/bookings", "by": "process:catalog-builder", "at": "2026-03-20T08:00:00Z"},
		map[string]any{"op": "ensure_verification", "concept_id": "metrics/bookings", "by": "human:ana@fjord", "at": "2026-03-25T10:00:00Z"},
		map[string]any{"op": "remove_source", "concept_id": "metrics/bookings", "id": "does-not-exist"},
	)
	snap := snapshotTree(t, dir)
	prev := h.mustCall(t, "preview_concept_patch", args)
	if prev["status"] != "noop" || prev["plan_digest"] != nil || prev["result_revision"] != nil || len(prev["affected_paths"].([]any)) != 0 {
		t.Fatalf("noop preview: %v", prev)
	}
	for _, digest := range []string{"sha256:" + strings.Repeat("0", 64)} { // "" is the noop apply: TestPatchNoopApply
		_, derr := h.call(t, "apply_concept_patch", applyArgs(map[string]any{"base_revision": prev["base_revision"], "plan_digest": digest}, args))
		wantCode(t, derr, "PLAN_MISMATCH")
	}
	if !sameSnapshot(snap, snapshotTree(t, dir)) || okfExists(dir) {
		t.Fatal("a noop wrote something")
	}
}

// TestMigrationTargetNoop: an already-0.2 bundle previews as noop (no
// proof, no digest); the apply takes expected_source only, validates, and
// writes nothing, not even .okf/. A stale expected_source is refused.
func TestMigrationTargetNoop(t *testing.T) {
	h := newHarness(t, Config{})
	dir := genBundle(t, 5)
	args := migrateArgs(dir, nil)
	prev := h.mustCall(t, "preview_v02_migration", args)
	if prev["status"] != "noop" || prev["proof"] != nil || prev["plan_digest"] != nil {
		t.Fatalf("target preview: %v", prev)
	}
	snap := snapshotTree(t, dir)
	res := h.mustCall(t, "apply_v02_migration", migrateApply(prev, args))
	if res["status"] != "noop" || res["target_conformant"] != true || res["base_revision"] != prev["base_revision"] || res["result_revision"] != prev["base_revision"] {
		t.Fatalf("target-noop apply: %v", res)
	}
	stale := migrateApply(prev, args)
	stale["expected_source"] = map[string]any{"okf_version": "0.1", "declared": false, "legacy_concepts": 3}
	_, derr := h.call(t, "apply_v02_migration", stale)
	wantCode(t, derr, "PLAN_MISMATCH")
	if !sameSnapshot(snap, snapshotTree(t, dir)) || okfExists(dir) {
		t.Fatal("the target-noop branch wrote something")
	}
}

// TestMigrationBindingArguments: the proof must belong to the request, a
// 0.1 bundle cannot take the target-noop branch, and proof and digest go
// together. None of these writes anything, not even .okf/.
func TestMigrationBindingArguments(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, v01Bundle)
	prev, args := migrateFully(t, h, dir)
	snap := snapshotTree(t, dir)
	full := migrateApply(prev, args)
	without := func(keys ...string) map[string]any {
		m := map[string]any{}
		for k, v := range full {
			m[k] = v
		}
		for _, k := range keys {
			delete(m, k)
		}
		return m
	}
	foreignProof := without()
	proof := map[string]any{}
	for k, v := range prev["proof"].(map[string]any) {
		proof[k] = v
	}
	proof["request_digest"] = prev["base_revision"] // a digest, but not of this request
	foreignProof["proof"] = proof
	cases := []struct {
		name string
		args map[string]any
		code string
	}{
		{"proof of another request", foreignProof, "PLAN_MISMATCH"},
		{"expected_source only on a 0.1 bundle", without("proof", "expected_plan_digest"), "INVALID_ARGUMENT"},
		{"proof without digest", without("expected_plan_digest"), "INVALID_ARGUMENT"},
		{"digest without proof", without("proof"), "INVALID_ARGUMENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, derr := h.call(t, "apply_v02_migration", c.args)
			wantCode(t, derr, registryCode(c.code))
			if !sameSnapshot(snap, snapshotTree(t, dir)) || okfExists(dir) {
				t.Fatal("a refused apply wrote something")
			}
		})
	}
	if res := h.mustCall(t, "apply_v02_migration", full); res["status"] != "applied" {
		t.Fatalf("genuine apply: %v", res)
	}
}

// TestMigrationNeedsMapping: a citation in plain prose blocks the preview
// (no proof, no digest, listed in needs_mapping); the reviewer's explicit
// mapping makes it applicable and is what the apply writes.
func TestMigrationNeedsMapping(t *testing.T) {
	h := newHarness(t, Config{})
	dir := ownBundle(t, v01Bundle)
	prose := "---\ntype: Reference\ntitle: Prose citation\ntimestamp: '2026-05-28T22:50:09+00:00'\n---\n\nSee the docs [1].\n\n# Citations\n- https://example.com/a\n- The telemetry handbook, chapter 3\n"
	if err := os.WriteFile(filepath.Join(dir, "references/prose.md"), []byte(prose), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := snapshotTree(t, dir)
	blocked := h.mustCall(t, "preview_v02_migration", migrateArgs(dir, nil))
	if blocked["status"] != "blocked" || blocked["proof"] != nil || blocked["plan_digest"] != nil || len(blocked["affected_paths"].([]any)) != 0 {
		t.Fatalf("blocked preview: %v", blocked)
	}
	needs := blocked["needs_mapping"].([]any)
	if len(needs) != 1 {
		t.Fatalf("needs_mapping: %v", needs)
	}
	n := needs[0].(map[string]any)
	if n["concept_id"] != "references/prose" || n["item"] != float64(2) || n["text"] != "The telemetry handbook, chapter 3" {
		t.Fatalf("needs_mapping entry: %v", n)
	}
	if !hasDiag(blocked, "references/prose", "ambiguous_citation") {
		t.Fatalf("diagnostics: %v", blocked["diagnostics"])
	}
	if _, derr := h.call(t, "apply_v02_migration", migrateApply(blocked, migrateArgs(dir, nil))); derr == nil {
		t.Fatal("a blocked migration applied")
	}
	if !sameSnapshot(snap, snapshotTree(t, dir)) {
		t.Fatal("a blocked migration wrote something")
	}

	args := migrateArgs(dir, []any{map[string]any{"concept_id": "references/prose", "item": 2, "id": "telemetry-handbook", "resource": "https://example.com/telemetry-handbook", "title": "Telemetry handbook"}})
	prev := h.mustCall(t, "preview_v02_migration", args)
	if prev["status"] != "applicable" || prev["proof"] == nil || prev["plan_digest"] == nil || len(prev["needs_mapping"].([]any)) != 0 {
		t.Fatalf("preview with the mapping: %v", prev)
	}
	if res := h.mustCall(t, "apply_v02_migration", migrateApply(prev, args)); res["status"] != "applied" {
		t.Fatalf("apply: %v", res)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "references/prose.md"))
	for _, want := range []string{"generated: { by: process:okf-migration, at: 2026-05-28T22:50:09+00:00 }\n",
		"id: telemetry-handbook", "resource: https://example.com/telemetry-handbook", "[^telemetry-handbook]: Telemetry handbook\n"} {
		if !strings.Contains(string(got), want) {
			t.Fatalf("migrated concept lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "timestamp:") || strings.Contains(string(got), "# Citations") {
		t.Fatalf("legacy left behind:\n%s", got)
	}
}
