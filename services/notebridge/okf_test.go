package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func capabilityOps(t *testing.T, args ...string) map[string][]string {
	t.Helper()
	out, err := exec.Command(binPath, append([]string{"capabilities"}, args...)...).Output()
	if err != nil {
		t.Fatalf("capabilities %v: %v", args, err)
	}
	var c capabilities
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	ops := map[string][]string{}
	for _, op := range c.Operations {
		for _, e := range op.Exposure {
			ops[op.Name] = append(ops[op.Name], string(e))
		}
	}
	return ops
}

// TestToolsetsAndOKFExposure: --toolsets selects operation sets and the
// disabled ones appear nowhere (the Joplin ↔ OKF operations need both); OKF is stdio-only unless roots are set, and
// never reaches Actions or the OpenAPI document.
func TestToolsetsAndOKFExposure(t *testing.T) {
	all := capabilityOps(t)
	if all["list_notes"] == nil || all["write_concept"] == nil {
		t.Fatalf("default toolsets must include joplin and okf: %v", all)
	}
	if got := strings.Join(all["write_concept"], ","); got != "mcp-stdio" {
		t.Fatalf("write_concept exposure without roots = %s", got)
	}
	okfOnly := capabilityOps(t, "--toolsets", "okf")
	joplinOnly := capabilityOps(t, "--toolsets", "joplin")
	if okfOnly["list_notes"] != nil || okfOnly["write_concept"] == nil {
		t.Fatalf("--toolsets okf: %v", okfOnly)
	}
	if joplinOnly["list_concepts"] != nil || joplinOnly["list_notes"] == nil {
		t.Fatalf("--toolsets joplin: %v", joplinOnly)
	}
	// The Joplin ↔ OKF operations need both toolsets, and only they.
	bridging := []string{"export_notebook_to_okf", "preview_okf_to_notebook"}
	for _, name := range bridging {
		if all[name] == nil || okfOnly[name] != nil || joplinOnly[name] != nil {
			t.Fatalf("%s: both toolsets %v, okf only %v, joplin only %v", name, all[name], okfOnly[name], joplinOnly[name])
		}
	}
	if len(okfOnly)+len(joplinOnly)+len(bridging) != len(all) {
		t.Fatalf("the toolsets do not partition the catalog: %d + %d + %d != %d", len(okfOnly), len(joplinOnly), len(bridging), len(all))
	}
	rooted := capabilityOps(t, "--okf-roots", "/srv/bundles")
	if got := strings.Join(rooted["list_concepts"], ","); got != "mcp-stdio,mcp-http" {
		t.Fatalf("list_concepts exposure with roots = %s", got)
	}
	if out, err := exec.Command(binPath, "capabilities", "--okf-roots", "relative/dir").CombinedOutput(); err == nil {
		t.Fatalf("a relative OKF root was accepted: %s", out)
	}
	if out, err := exec.Command(binPath, "capabilities", "--toolsets", "okf,bogus").CombinedOutput(); err == nil {
		t.Fatalf("an unknown toolset was accepted: %s", out)
	}
	doc, err := exec.Command(binPath, "openapi", "--origin", "https://notes.example.com", "--okf-roots", "/srv/bundles").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"list_concepts", "read_concept", "search_concepts", "get_neighbors", "validate_bundle", "write_concept", "okf"} {
		if strings.Contains(string(doc), name) {
			t.Errorf("OpenAPI mentions %s", name)
		}
	}
}

// TestStdioOKFSession drives the OKF tools through the built binary over
// stdio: stdout carries protocol messages only, and nothing of the
// document reaches stderr.
func TestStdioOKFSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.MkdirAll(filepath.Join(dir, "metrics"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "metrics/revenue.md"), []byte("---\ntype: Metric\ntitle: Revenue\n---\n\nSee [orders](/tables/orders.md).\n"), 0o644)
	content := "---\ntype: Metric\ntitle: Margin\n---\n\nBODY-MARKER-7731\n"
	call := func(id int, name string, args map[string]any) string {
		raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
		return string(raw)
	}
	// The stdio loop runs calls concurrently, so order-dependent calls go
	// in separate sessions.
	first := strings.Join([]string{
		initialize(1, "2025-06-18"),
		call(2, "list_concepts", map[string]any{"bundle_path": dir}),
		call(5, "read_concept", map[string]any{"bundle_path": dir, "concept_id": "../escape"}),
	}, "\n") + "\n"
	stdout, stderr, code := runStdioSession(t, first, "--toolsets", "okf")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rs := parseLines(t, stdout)
	if !strings.Contains(string(rs["2"].Result), `\"total\":1`) {
		t.Errorf("list: %s", rs["2"].Result)
	}
	if !strings.Contains(string(rs["5"].Result), "INVALID_ARGUMENT") {
		t.Errorf("escaping id: %s", rs["5"].Result)
	}
	// Two identical writes race: one commits, the other replays its receipt.
	second := strings.Join([]string{
		initialize(1, "2025-06-18"),
		call(3, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/margin", "content": content}),
		call(4, "write_concept", map[string]any{"bundle_path": dir, "concept_id": "metrics/margin", "content": content}),
	}, "\n") + "\n"
	stdout, stderr2, code := runStdioSession(t, second, "--toolsets", "okf")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr2)
	}
	stderr += stderr2
	rs = parseLines(t, stdout)
	var replays int
	for _, id := range []string{"3", "4"} {
		r := string(rs[id].Result)
		if !strings.Contains(r, `\"created\":true`) {
			t.Errorf("write %s: %s", id, r)
		}
		if strings.Contains(r, `\"replayed\":true`) {
			replays++
		}
	}
	if replays != 1 {
		t.Errorf("%d of two identical writes replayed, want exactly 1", replays)
	}
	third := initialize(1, "2025-06-18") + "\n" + call(6, "validate_bundle", map[string]any{"bundle_path": dir}) + "\n"
	stdout, stderr3, _ := runStdioSession(t, third, "--toolsets", "okf")
	stderr += stderr3
	if !strings.Contains(string(parseLines(t, stdout)["6"].Result), `\"conformant\":true`) {
		t.Errorf("validate: %s", stdout)
	}
	if strings.Contains(stderr, "BODY-MARKER-7731") || strings.Contains(stderr, dir) {
		t.Errorf("stderr carries document content or the bundle path:\n%s", stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "metrics/margin.md")); string(b) != content {
		t.Fatal("written concept is not byte-exact")
	}
}
