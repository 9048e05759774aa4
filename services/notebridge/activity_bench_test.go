package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// BenchmarkActivityLogGetNote serves get_note of a 2 KB note over MCP
// stdio (one tools/call line through mcpadapter.ServeStdio) against a fake
// Joplin over HTTP, three ways in the same run: log (the service as built:
// collector, Joplin view naming the note, the entry written to the log
// file), noop (the same with the entry handed to a writer that drops it)
// and none (no activity sink at all: the executor as before the log),
// interleaved. It reports each one's time per call, the log's cost against
// the other two and the log's size per 10,000 calls. ns/op is the three
// calls together. TestRealJoplinActivityLogBench runs it against real
// Joplin.
func BenchmarkActivityLogGetNote(b *testing.B) {
	const token = "bench-joplin-token-0123456789"
	_, url, tf := joplinfake.Serve(b, token)
	benchActivityGetNote(b, url, tf)
}

// benchActivityGetNote is BenchmarkActivityLogGetNote against the Joplin
// at url.
func benchActivityGetNote(b *testing.B, url, tf string) {
	state := b.TempDir()
	c := &config{JoplinURL: url, JoplinTokenFile: tf, JoplinWait: 1e9, JoplinTimeout: 5e9,
		StateDir: state, MaxResource: 1 << 20, MaxRequestBytes: 1 << 20, MaxDepth: 64, MaxActive: 4}
	a, err := newApp(c, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer a.close()
	ctx := context.Background()
	nb, derr := a.exec.Call(ctx, principal.Stdio(), registry.MCPStdio, "create_notebook", json.RawMessage(`{"title":"Bench `+strconv.FormatInt(time.Now().UnixNano(), 10)+`"}`))
	if derr != nil {
		b.Fatal(derr)
	}
	var folder struct{ ID string }
	json.Unmarshal(nb, &folder)
	body, _ := json.Marshal(strings.Repeat("A line of the note's body. ", 75))
	created, derr := a.exec.Call(ctx, principal.Stdio(), registry.MCPStdio, "create_note",
		json.RawMessage(`{"notebook_id":"`+folder.ID+`","title":"Bench","body":`+string(body)+`}`))
	if derr != nil {
		b.Fatal(derr)
	}
	var note struct{ ID string }
	json.Unmarshal(created, &note)
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"` + note.ID + `"}}}` + "\n")

	executors := map[string]*executor.Executor{"log": a.exec}
	for name, opts := range map[string][]executor.Option{
		"noop": {executor.WithActivity(func(activity.Entry) {})},
		"none": nil,
	} {
		ex, err := executor.New(a.exec.Registry(), c.limits(), opts...)
		if err != nil {
			b.Fatal(err)
		}
		executors[name] = ex
	}
	// The three run interleaved, call by call and in turning order, so
	// that the load of a shared machine weighs on each alike.
	names := []string{"log", "noop", "none"}
	servers := map[string]*mcpadapter.Server{}
	for _, name := range names {
		servers[name] = mcpadapter.NewServer(executors[name], registry.MCPStdio, "bench")
	}
	serve := func(name string, w io.Writer) {
		if err := mcpadapter.ServeStdio(ctx, servers[name], bytes.NewReader(line), w, 1<<20, slog.New(slog.DiscardHandler)); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range names {
		var out bytes.Buffer
		serve(name, &out)
		if !strings.Contains(out.String(), `"structuredContent"`) {
			b.Fatalf("%s: get_note failed: %.300s", name, out.String())
		}
	}
	spent := map[string]time.Duration{}
	before := logBytes(b, state)
	for i := 0; b.Loop(); i++ {
		for k := range names { // each variant takes each place in turn
			name := names[(i+k)%len(names)]
			start := time.Now()
			serve(name, io.Discard)
			spent[name] += time.Since(start)
		}
	}
	for _, name := range names {
		b.ReportMetric(float64(spent[name].Nanoseconds())/float64(b.N), name+"-ns/call")
	}
	b.ReportMetric(100*(float64(spent["log"])/float64(spent["noop"])-1), "log-vs-noop-%")
	b.ReportMetric(100*(float64(spent["log"])/float64(spent["none"])-1), "log-vs-none-%")
	b.ReportMetric(float64(logBytes(b, state)-before)/float64(b.N)*10_000, "log-bytes/10k-calls")
}

// logBytes is the activity log's size on disk, every file.
func logBytes(b *testing.B, state string) int64 {
	files, _ := filepath.Glob(filepath.Join(activityDir(state), "*.jsonl"))
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return n
}
