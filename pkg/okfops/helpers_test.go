package okfops

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/executor"
	"github.com/notebridge/notebridge/pkg/registry"
)

// fixtureRoot holds the spec authors' bundles; tests only ever copy them.
const fixtureRoot = "../../../shared/fixtures/okf"

type harness struct {
	ex  *executor.Executor
	log *bytes.Buffer
}

func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	reg, err := registry.New(Operations(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ex, err := executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation(), executor.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{ex: ex, log: &buf}
}

// call runs an operation over MCP stdio and decodes its result.
func (h *harness) call(t testing.TB, name string, args map[string]any) (map[string]any, *domainerr.Error) {
	t.Helper()
	return h.callOn(t, registry.MCPStdio, name, args)
}

func (h *harness) callOn(t testing.TB, tr registry.Transport, name string, args map[string]any) (map[string]any, *domainerr.Error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, derr := h.ex.Call(context.Background(), tr, name, raw)
	if derr != nil {
		if derr.Code == domainerr.Internal {
			t.Fatalf("%s: internal error: %v %v", name, derr, derr.Details)
		}
		return nil, derr
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func (h *harness) mustCall(t testing.TB, name string, args map[string]any) map[string]any {
	t.Helper()
	m, derr := h.call(t, name, args)
	if derr != nil {
		t.Fatalf("%s: %v %v", name, derr, derr.Details)
	}
	return m
}

func wantCode(t testing.TB, derr *domainerr.Error, code domainerr.Code) {
	t.Helper()
	if derr == nil || derr.Code != code {
		t.Fatalf("got %v, want %s", derr, code)
	}
}

// copyTree copies src into a fresh temporary directory and returns it.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// fixtureBundles lists every fixture bundle directory (profile/name).
func fixtureBundles(t testing.TB) []string {
	t.Helper()
	var out []string
	profiles, err := os.ReadDir(fixtureRoot)
	if err != nil {
		t.Fatalf("fixtures: %v", err)
	}
	for _, p := range profiles {
		if !p.IsDir() {
			continue
		}
		bundles, _ := os.ReadDir(filepath.Join(fixtureRoot, p.Name()))
		for _, b := range bundles {
			if b.IsDir() {
				out = append(out, p.Name()+"/"+b.Name())
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found only %d fixture bundles", len(out))
	}
	return out
}

// snapshotTree records every path under dir with its bytes and mode time,
// to prove an operation wrote nothing.
func snapshotTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		info, _ := d.Info()
		rel, _ := filepath.Rel(dir, p)
		entry := info.Mode().String() + " " + info.ModTime().String()
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			entry += " " + string(b)
		}
		out[rel] = entry
		return nil
	})
	return out
}

func conceptIDs(t testing.TB, dir string) []string {
	t.Helper()
	var ids []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		if n := d.Name(); n == "index.md" || n == "log.md" {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		ids = append(ids, strings.TrimSuffix(filepath.ToSlash(rel), ".md"))
		return nil
	})
	return ids
}
