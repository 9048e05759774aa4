package okfbridge

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/okfops"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// harness runs the bridge with the Joplin and OKF operations against one
// Joplin (the fake, or a real one in the integration test).
type harness struct {
	ex     *executor.Executor
	jc     *joplin.Client
	bundle string
}

// newHarness serves a fake Joplin; hook, when set, is the OKF store's
// fault hook.
func newHarness(t testing.TB, hook func(string) error) (*harness, *joplinfake.Server) {
	t.Helper()
	fake, url, tokenFile := joplinfake.Serve(t, "tok")
	return harnessFor(t, url, tokenFile, hook), fake
}

func harnessFor(t testing.TB, url, tokenFile string, hook func(string) error) *harness {
	t.Helper()
	jc, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tokenFile})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	root := t.TempDir()
	bundleDir := filepath.Join(root, "bundle")
	if err := os.Mkdir(bundleDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := okfops.Config{AllowedRoots: []string{root}, StoreHook: hook, Cache: filecache.New(filecache.Options{})}
	var ops []registry.Operation
	ops = append(ops, joplinops.Operations(jc, joplinops.DefaultLimits, joplinops.WithCreateLockDir(state),
		joplinops.WithReceiptDir(state, receipts.DefaultLimits))...)
	ops = append(ops, okfops.Operations(cfg)...)
	ops = append(ops, Operations(jc, cfg)...)
	reg, err := registry.New(ops...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
	if err != nil {
		t.Fatal(err)
	}
	return &harness{ex: ex, jc: jc, bundle: bundleDir}
}

func (h *harness) call(t testing.TB, name string, args any, out any) *domainerr.Error {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, derr := h.ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, raw)
	if derr != nil {
		if derr.Code == domainerr.Internal {
			t.Fatalf("%s: internal error: %v %v", name, derr, derr.Details)
		}
		return derr
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatal(err)
		}
	}
	return nil
}

func (h *harness) must(t testing.TB, name string, args any, out any) {
	t.Helper()
	if derr := h.call(t, name, args, out); derr != nil {
		t.Fatalf("%s: %v %v", name, derr, derr.Details)
	}
}

// seed helpers write straight to Joplin's Data API.
func (h *harness) folder(t testing.TB, title, parent string) string {
	t.Helper()
	var f folder
	if err := h.jc.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": title, "parent_id": parent}, &f); err != nil {
		t.Fatal(err)
	}
	return f.ID
}

func (h *harness) note(t testing.TB, parent, title, body string, extra map[string]any) string {
	t.Helper()
	props := map[string]any{"title": title, "body": body, "parent_id": parent}
	for k, v := range extra {
		props[k] = v
	}
	var n note
	if err := h.jc.Write(context.Background(), "POST", "/notes", nil, props, &n); err != nil {
		t.Fatal(err)
	}
	return n.ID
}

func (h *harness) tag(t testing.TB, noteID, title string) {
	t.Helper()
	var tg tagRow
	if err := h.jc.Write(context.Background(), "POST", "/tags", nil, map[string]any{"title": title}, &tg); err != nil {
		t.Fatal(err)
	}
	if err := h.jc.Write(context.Background(), "POST", "/tags/"+tg.ID+"/notes", nil, map[string]any{"id": noteID}, nil); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) resource(t testing.TB, name string, data []byte) string {
	t.Helper()
	var r resourceRow
	if err := h.jc.WriteMultipartFile(context.Background(), "POST", "/resources", map[string]any{"title": name}, name, data, &r); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func (h *harness) readNote(t testing.TB, id string) note {
	t.Helper()
	var n note
	if err := h.jc.Get(context.Background(), "/notes/"+id, url.Values{"fields": {noteFields}}, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (h *harness) export(t testing.TB, nb string) exportOut {
	t.Helper()
	var out exportOut
	h.must(t, "export_notebook_to_okf", map[string]any{"bundle_path": h.bundle, "notebook_id": nb, "subnotebooks": true}, &out)
	return out
}

func (h *harness) preview(t testing.TB, nb string) importOut {
	t.Helper()
	var out importOut
	h.must(t, "preview_okf_to_notebook", map[string]any{"bundle_path": h.bundle, "notebook_id": nb}, &out)
	return out
}

// validate runs validate_bundle and fails on any error-severity problem.
func (h *harness) validate(t testing.TB) {
	t.Helper()
	var v struct {
		Conformant bool              `json:"conformant"`
		Errors     int               `json:"errors"`
		Problems   []json.RawMessage `json:"problems"`
	}
	h.must(t, "validate_bundle", map[string]any{"bundle_path": h.bundle}, &v)
	if !v.Conformant || v.Errors != 0 {
		t.Fatalf("bundle not conformant: %d errors: %s", v.Errors, v.Problems)
	}
}

func (h *harness) readFile(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.bundle, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (h *harness) writeFile(t testing.TB, rel, content string) {
	t.Helper()
	p := filepath.Join(h.bundle, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
