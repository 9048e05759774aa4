package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// activityApp assembles the bridge against the fake Joplin at url, with
// its state in stateDir.
func activityApp(t *testing.T, url, tokenFile, stateDir string) *app {
	t.Helper()
	c := &config{JoplinURL: url, JoplinTokenFile: tokenFile, JoplinWait: time.Second, JoplinTimeout: 5 * time.Second,
		StateDir: stateDir, MaxResource: 1 << 20, MaxRequestBytes: 1 << 20, MaxDepth: 64, MaxActive: 4}
	a, err := newApp(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// httpCaller serves a's MCP over HTTP behind the static token and returns
// a client of it.
func httpCaller(t *testing.T, a *app, token string) mcptest.CallFunc {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp-token")
	os.WriteFile(path, []byte(token), 0o600)
	tf, err := bearer.NewTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpadapter.NewHTTPHandler(mcpadapter.NewServer(a.exec, registry.MCPHTTP, "test"), mcpadapter.HTTPConfig{Token: tf, MaxBodyBytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Caller(t, mcptest.HTTPBehind(t, h, token))
}

// TestActivityLogHoldsNoTextOrSecret seeds notes whose titles, bodies,
// tags, notebook and attachment carry marker words, searches for them,
// calls with tokens carrying others, fails calls whose arguments carry
// more, and then reads every byte of the activity log and of /metrics:
// no marker appears, while the log does name the notes by id.
func TestActivityLogHoldsNoTextOrSecret(t *testing.T) {
	const joplinToken = "joplin-MARKERJOPLINTOKEN-0123456789"
	const mcpToken = "mcp-MARKERMCPTOKEN-0123456789abcdef"
	_, url, tf := joplinfake.Serve(t, joplinToken)
	state := t.TempDir()
	a := activityApp(t, url, tf, state)
	defer a.close()
	stdio := mcptest.Caller(t, mcptest.InProcessStdio(t, mcpadapter.NewServer(a.exec, registry.MCPStdio, "test")))
	overHTTP := httpCaller(t, a, mcpToken)

	must := func(call mcptest.CallFunc, name string, args map[string]any) map[string]any {
		t.Helper()
		out, derr := call(context.Background(), name, args)
		if derr != nil {
			t.Fatalf("%s: %v", name, derr)
		}
		var v map[string]any
		json.Unmarshal(out, &v)
		return v
	}
	nb := must(stdio, "create_notebook", map[string]any{"title": "MARKERNOTEBOOK"})["id"].(string)
	note := must(stdio, "create_note", map[string]any{"notebook_id": nb, "title": "MARKERTITLE", "body": "MARKERBODY and more"})["id"].(string)
	tag := must(overHTTP, "create_tag", map[string]any{"title": "markertagword"})["id"].(string)
	must(overHTTP, "tag_note", map[string]any{"note_id": note, "tag_id": tag})
	must(overHTTP, "get_note", map[string]any{"id": note})
	must(stdio, "update_note", map[string]any{"id": note, "body": "MARKERUPDATE"})
	must(stdio, "search", map[string]any{"query": "MARKERQUERY"})
	must(overHTTP, "search", map[string]any{"query": "MARKERBODY"})
	must(stdio, "create_resource", map[string]any{"data_base64": "TUFSS0VSREFUQQ==", "filename": "MARKERFILE.txt"})
	stdio(context.Background(), "get_note", map[string]any{"id": "MARKERBADID"})
	stdio(context.Background(), "MARKERTOOLNAME", map[string]any{})

	var metrics bytes.Buffer
	if err := a.metrics.reg.Write(&metrics); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	files, _ := filepath.Glob(filepath.Join(activityDir(state), "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		logged.Write(b)
	}
	for name, text := range map[string]string{"activity log": logged.String(), "metrics": metrics.String()} {
		for _, marker := range []string{"MARKER", "marker", "TUFSS0VS"} {
			if i := strings.Index(text, marker); i >= 0 {
				t.Errorf("%s holds %q: …%s…", name, marker, text[max(0, i-80):min(len(text), i+40)])
			}
		}
	}
	if !strings.Contains(logged.String(), note) || !strings.Contains(logged.String(), tag) {
		t.Errorf("the log does not name the note %s and tag %s it served:\n%s", note, tag, logged.String())
	}
	if !strings.Contains(metrics.String(), `notebridge_calls_total{tool="get_note",surface="mcp-http",outcome="ok"} 1`) {
		t.Errorf("metrics lack the get_note call:\n%s", metrics.String())
	}
}

// TestActivityLogSurvivesRestartAndPrints: entries written before the
// bridge restarts are read after it, with those written since, by
// `notebridge activity --json` (newest first, the fields the issue names)
// and its filters.
func TestActivityLogSurvivesRestartAndPrints(t *testing.T) {
	const token = "fake-joplin-token-0123456789"
	_, url, tf := joplinfake.Serve(t, token)
	state := t.TempDir()
	a := activityApp(t, url, tf, state)
	stdio := mcptest.Caller(t, mcptest.InProcessStdio(t, mcpadapter.NewServer(a.exec, registry.MCPStdio, "test")))
	out, derr := stdio(context.Background(), "create_notebook", map[string]any{"title": "Work"})
	if derr != nil {
		t.Fatal(derr)
	}
	a.close()

	b := activityApp(t, url, tf, state)
	defer b.close()
	if _, derr := b.exec.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "list_notebooks", nil); derr != nil {
		t.Fatal(derr)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"activity", "--json", "--state-dir", state}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("activity exited %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("activity --json printed %d lines, want 2:\n%s", len(lines), stdout.String())
	}
	var created struct {
		ID string `json:"id"`
	}
	json.Unmarshal(out, &created)
	for i, want := range []string{"list_notebooks", "create_notebook"} {
		var e map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &e); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"time", "surface", "credential", "tool", "outcome", "notes", "receipt"} {
			if _, ok := e[f]; !ok {
				t.Errorf("line %d lacks %s: %s", i, f, lines[i])
			}
		}
		if e["tool"] != want || e["credential"] != "stdio" {
			t.Errorf("line %d: %s, want %s by stdio", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[1], created.ID) {
		t.Errorf("create_notebook's entry does not name the notebook %s: %s", created.ID, lines[1])
	}
	stdout.Reset()
	run(context.Background(), []string{"activity", "--tool", "create_notebook", "--state-dir", state}, nil, &stdout, &stderr)
	if got := strings.Count(stdout.String(), "\n"); got != 2 || !strings.Contains(stdout.String(), "create_notebook") {
		t.Errorf("activity --tool create_notebook printed:\n%s", stdout.String())
	}
}

// TestActivityLogFailureFailsNoCall: with the log's directory taken by a
// file, calls succeed, joplin_status says the log is failing, and once the
// directory can be made again the next call is logged and the status is
// healthy.
func TestActivityLogFailureFailsNoCall(t *testing.T) {
	const token = "fake-joplin-token-0123456789"
	_, url, tf := joplinfake.Serve(t, token)
	state := t.TempDir()
	blocker := activityDir(state)
	if err := os.WriteFile(blocker, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := activityApp(t, url, tf, state)
	defer a.close()
	status := func() (ok bool, failed float64) {
		t.Helper()
		out, derr := a.exec.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "joplin_status", nil)
		if derr != nil {
			t.Fatalf("joplin_status failed with the log failing: %v", derr)
		}
		var st struct {
			ActivityLog *struct {
				OK           bool    `json:"ok"`
				FailedWrites float64 `json:"failed_writes"`
			} `json:"activity_log"`
		}
		json.Unmarshal(out, &st)
		if st.ActivityLog == nil {
			t.Fatalf("joplin_status has no activity_log: %s", out)
		}
		return st.ActivityLog.OK, st.ActivityLog.FailedWrites
	}
	if _, derr := a.exec.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "create_notebook", json.RawMessage(`{"title":"Work"}`)); derr != nil {
		t.Fatalf("a call failed because the log could not be written: %v", derr)
	}
	if ok, failed := status(); ok || failed < 2 {
		t.Fatalf("joplin_status: ok %v, failed %v; want the log reported failing", ok, failed)
	}
	os.Remove(blocker)
	a.exec.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "list_notebooks", nil)
	if ok, _ := status(); !ok {
		t.Fatal("joplin_status still reports the log failing after a good write")
	}
	entries, err := activity.ReadDir(blocker, activity.Filter{Tool: "list_notebooks"})
	if err != nil || len(entries) != 1 {
		t.Fatalf("after recovery the log holds %v (%v), want the list_notebooks call", entries, err)
	}
}

// TestServeMetricsOnItsOwnListener: `serve --metrics-listen` serves
// /metrics in the Prometheus text format on that address only; the MCP
// listener (the one Caddy proxies) does not serve it.
func TestServeMetricsOnItsOwnListener(t *testing.T) {
	p := startServeEnv(t, nil, "--metrics-listen", "127.0.0.1:0")
	if p.exited {
		t.Fatalf("serve exited: %s", p.log.String())
	}
	line, ok := p.log.waitFor(t, func(l string) bool { return strings.Contains(l, `msg="serving metrics"`) })
	if !ok {
		t.Fatalf("no metrics listener: %s", p.log.String())
	}
	addr := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line)[1]
	resp, err := http.Get("http://" + addr + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") ||
		!strings.Contains(string(body), "# TYPE notebridge_calls_total counter") {
		t.Fatalf("/metrics: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, err = http.Get("http://" + p.addrs["MCP Streamable HTTP"] + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Fatal("the MCP listener serves /metrics too")
	}
}
