package okfops

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

// The project's own fixture bundles (pkg/testkit/okftest/testdata/okf) the
// workflow tests copy and change.
const (
	instantBundle = "v0.2-instant/fjord_rentals"
	dateFixture   = "v0.2-date/fjord_rentals"
	v01Bundle     = "v0.1/fjord_telemetry"
)

// ownBundle copies one of the project's own bundles into a fresh temporary
// directory; tests only ever change copies.
func ownBundle(t testing.TB, name string) string {
	t.Helper()
	return okftest.Copy(t, okftest.Own(), name)
}

// fixtureSources are the bundle trees the fixture-wide tests run over: the
// project's own always, the spec authors' as TestConformance* tests.
type fixtureSource struct {
	fsys fs.FS
	min  int // the fewest bundles the tree may hold
}

func ownSource() fixtureSource { return fixtureSource{okftest.Own(), len(okftest.OwnBundles)} }

func authorsSource(t testing.TB) fixtureSource { return fixtureSource{okftest.Authors(t), 10} }

// bundles lists the source's bundles (profile/name).
func (s fixtureSource) bundles(t testing.TB) []string { return okftest.MustBundles(t, s.fsys, s.min) }

// profile lists the source's bundles of one profile, failing when there is none.
func (s fixtureSource) profile(t testing.TB, profile string) []string {
	t.Helper()
	var out []string
	for _, name := range s.bundles(t) {
		if strings.HasPrefix(name, profile+"/") {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s fixture bundle", profile)
	}
	return out
}

func (s fixtureSource) copy(t testing.TB, name string) string { return okftest.Copy(t, s.fsys, name) }

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
	out, derr := h.ex.Call(context.Background(), principal.Stdio(), tr, name, raw)
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
