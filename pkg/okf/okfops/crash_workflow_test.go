package okfops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

// The crash child applies the request in envRequest, bound by the preview
// in envPreview, through apply operation envApplyOp, and SIGKILLs itself
// when the store reaches step envCrashStep.
const (
	childCrashApply = "crash-apply"
	envCrashStep    = "NB_OKFOPS_CRASH_STEP"
	envApplyOp      = "NB_OKFOPS_APPLY_OP"
	envRequest      = "NB_OKFOPS_REQUEST"
	envPreview      = "NB_OKFOPS_PREVIEW"
)

func crashApplyChild() int {
	step := os.Getenv(envCrashStep)
	ex, err := newChildExecutor(Config{StoreHook: func(s string) error {
		if s == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Hour)
		}
		return nil
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	var req, prev map[string]any
	if err := json.Unmarshal([]byte(os.Getenv(envRequest)), &req); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := json.Unmarshal([]byte(os.Getenv(envPreview)), &prev); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	op := os.Getenv(envApplyOp)
	flow, ok := crashFlowByApply(op)
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown apply operation", op)
		return 3
	}
	raw, err := json.Marshal(flow.bind(prev, req))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	out, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, op, raw)
	if derr != nil {
		fmt.Println("ERR", derr.Code)
		return 0
	}
	fmt.Println("OK", string(out))
	return 0
}

// crashFlow is a preview/apply workflow the crash matrix drives.
type crashFlow struct {
	name, apply string
	// prepare copies the fixture and previews it; it returns the bundle,
	// the request arguments and the (applicable) preview.
	prepare func(t *testing.T, h *harness) (dir string, req, prev map[string]any)
	// bind builds the identical apply arguments from preview and request.
	bind func(prev, req map[string]any) map[string]any
}

var crashFlows = []crashFlow{
	{
		name: "concept_patch", apply: "apply_concept_patch", bind: applyArgs,
		prepare: func(t *testing.T, h *harness) (string, map[string]any, map[string]any) {
			dir := ownBundle(t, instantBundle)
			req := patchArgs(dir, tenOps...)
			prev := h.mustCall(t, "preview_concept_patch", req)
			if prev["status"] != "applicable" {
				t.Fatalf("preview: %v", prev)
			}
			return dir, req, prev
		},
	},
	{
		name: "v02_migration", apply: "apply_v02_migration", bind: migrateApply,
		prepare: func(t *testing.T, h *harness) (string, map[string]any, map[string]any) {
			dir := ownBundle(t, v01Bundle)
			prev, req := migrateFully(t, h, dir)
			return dir, req, prev
		},
	},
}

func crashFlowByApply(op string) (crashFlow, bool) {
	for _, f := range crashFlows {
		if f.apply == op {
			return f, true
		}
	}
	return crashFlow{}, false
}

// bindingOnly keeps the preview fields an apply binds to (the diffs stay
// out of the child's environment).
func bindingOnly(prev map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"base_revision", "result_revision", "plan_digest", "expected_source", "proof"} {
		if v, ok := prev[k]; ok {
			out[k] = v
		}
	}
	return out
}

// visibleTree reads every file of dir except the store's .okf/.
func visibleTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == store.Dir {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// treeDiff names the first path where two trees differ ("" when equal).
func treeDiff(a, b map[string]string) string {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return k
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			return k
		}
	}
	return ""
}

// TestWorkflowCrashMatrix runs apply_concept_patch (the ten-operation
// patch, root index.md included) and apply_v02_migration in a child
// process that SIGKILLs itself at each commit step. Before the journal is
// durable the bundle stays byte-exactly at base and the identical retry
// commits ("applied"); after it, the identical retry completes the commit
// in recovery and replays its receipt ("replayed"), leaving the bundle
// byte-exactly at the result of an uninterrupted apply. The root index.md
// is published last.
func TestWorkflowCrashMatrix(t *testing.T) {
	for _, f := range crashFlows {
		t.Run(f.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			refDir, refReq, refPrev := f.prepare(t, h)
			if res := h.mustCall(t, f.apply, f.bind(refPrev, refReq)); res["status"] != "applied" {
				t.Fatalf("reference apply: %v", res)
			}
			result := visibleTree(t, refDir)
			paths := refPrev["affected_paths"].([]any)
			n := len(paths)
			if n < 3 || paths[n-1] != "index.md" {
				t.Fatalf("want at least three files, root index.md last: %v", paths)
			}
			last := "apply:" + strconv.Itoa(n-1)
			steps := []string{store.StepLocked, store.StepStaged, store.StepJournaled, "apply:0", "apply:1", last,
				store.StepApplied, store.StepVerified, store.StepReceipted}
			for i, step := range steps {
				durable := i >= 2
				t.Run(step, func(t *testing.T) {
					dir, req, prev := f.prepare(t, h)
					if prev["plan_digest"] != refPrev["plan_digest"] {
						t.Fatal("the preview is not deterministic across copies")
					}
					base := visibleTree(t, dir)
					reqJSON, _ := json.Marshal(req)
					prevJSON, _ := json.Marshal(bindingOnly(prev))
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), childModeEnv+"="+childCrashApply, envCrashStep+"="+step,
						envApplyOp+"="+f.apply, envRequest+"="+string(reqJSON), envPreview+"="+string(prevJSON))
					out, err := cmd.CombinedOutput()
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
						t.Fatalf("the child was not killed at %s: %v\n%s", step, err, out)
					}

					mid := visibleTree(t, dir)
					switch step {
					case store.StepLocked, store.StepStaged, store.StepJournaled, "apply:0":
						// Nothing is published before the first apply step.
						if p := treeDiff(mid, base); p != "" {
							t.Fatalf("killed at %s, %s is not at base", step, p)
						}
					case last:
						for p := range result {
							want := result[p]
							if p == "index.md" {
								want = base[p]
							}
							if mid[p] != want {
								t.Fatalf("killed at %s: %s is not at %s (the root index.md must be published last)", step, p, map[bool]string{true: "base", false: "result"}[p == "index.md"])
							}
						}
					}
					if hasJournal(dir) != durable {
						t.Fatalf("killed at %s: journal present = %v, want %v", step, !durable, durable)
					}

					res := h.mustCall(t, f.apply, f.bind(prev, req))
					want := "applied"
					if durable {
						want = "replayed"
					}
					if res["status"] != want || res["change_id"] != prev["plan_digest"] || res["result_revision"] != prev["result_revision"] {
						t.Fatalf("retry after a kill at %s: %v, want %s", step, res, want)
					}
					if p := treeDiff(visibleTree(t, dir), result); p != "" {
						t.Fatalf("after the retry %s is not at the result", p)
					}
					if hasJournal(dir) {
						t.Fatal("the journal was left behind")
					}
					if entries, _ := os.ReadDir(filepath.Join(dir, ".okf/stage")); len(entries) != 0 {
						t.Fatalf("%d staged payloads left behind", len(entries))
					}
					if again := h.mustCall(t, f.apply, f.bind(prev, req)); again["status"] != "replayed" || again["committed_at"] != res["committed_at"] {
						t.Fatalf("a second retry: %v", again)
					}
				})
			}
		})
	}
}

func hasJournal(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".okf/journal"))
	return err == nil
}
