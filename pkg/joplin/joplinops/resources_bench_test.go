package joplinops_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// The resource benchmarks move a 25 MiB random payload through a bridge
// whose resource bound is raised to 32 MiB (and its argument bound to fit
// the base64 of that).
const benchPayload = 25 << 20

var (
	benchLimits     = joplinops.Limits{MaxScan: joplinops.DefaultLimits.MaxScan, MaxResourceBytes: 32 << 20}
	benchExecLimits = executor.Limits{MaxArgBytes: 48 << 20, MaxDepth: 64, MaxActive: 32}
)

// benchArgs returns create_resource's arguments for data, and its SHA-256.
func benchArgs(data []byte) (json.RawMessage, string) {
	sum := sha256.Sum256(data)
	args := `{"title":"bench payload","data_base64":"` + base64.StdEncoding.EncodeToString(data) + `"}`
	return json.RawMessage(args), hex.EncodeToString(sum[:])
}

// BenchmarkResourceRoundTrip times create_resource then
// get_resource_content of the payload through the executor, in process,
// against the fake Joplin over HTTP. It reports MiB of payload per second
// of round trip.
func BenchmarkResourceRoundTrip(b *testing.B) {
	br := newResourceBridge(b, benchLimits, benchExecLimits, nil)
	args, want := benchArgs(randomData(b, benchPayload))
	ctx := context.Background()
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		created, derr := br.exec.Call(ctx, principal.Stdio(), registry.MCPStdio, "create_resource", args)
		if derr != nil {
			b.Fatal(derr)
		}
		var r struct {
			ID     string `json:"id"`
			SHA256 string `json:"sha256"`
		}
		if err := json.Unmarshal(created, &r); err != nil || r.SHA256 != want {
			b.Fatalf("create_resource: sha256 %q, %v", r.SHA256, err)
		}
		got, derr := br.exec.Call(ctx, principal.Stdio(), registry.MCPStdio, "get_resource_content", json.RawMessage(`{"id":"`+r.ID+`"}`))
		elapsed += time.Since(start)
		if derr != nil || !bytes.Contains(got[:min(len(got), 512)], []byte(`"sha256":"`+want+`"`)) {
			b.Fatalf("get_resource_content: %v", derr)
		}
		// Delete it so every round trip creates anew.
		if _, derr := br.exec.Call(ctx, principal.Stdio(), registry.MCPStdio, "delete_resource", json.RawMessage(`{"id":"`+r.ID+`"}`)); derr != nil {
			b.Fatal(derr)
		}
	}
	b.ReportMetric(float64(benchPayload)/(1<<20)/(elapsed.Seconds()/float64(b.N)), "MiB/s")
}

// Environment of the bridge process BenchmarkResourceBridgeRSS starts.
const (
	childModeEnv  = "NOTEBRIDGE_RESOURCE_BENCH_MODE"
	childURLEnv   = "NOTEBRIDGE_RESOURCE_BENCH_JOPLIN_URL"
	childTokenEnv = "NOTEBRIDGE_RESOURCE_BENCH_TOKEN_FILE"
	// bridgeEnvVar holds space-separated KEY=VALUE pairs (e.g.
	// GOMEMLIMIT=64MiB) added to the bridge process's environment only.
	bridgeEnvVar = "NOTEBRIDGE_BENCH_BRIDGE_ENV"
)

// TestResourceBridgeChild is the bridge process BenchmarkResourceBridgeRSS
// measures; it runs only when that benchmark starts it. In mode "mcp" it
// serves MCP over stdio exactly as `notebridge mcp stdio` does; in mode
// "executor" it reads frames "name<TAB>length\n" followed by that many
// bytes of arguments and writes each result or error as one line, so that
// little but the executor and the handlers holds data.
func TestResourceBridgeChild(t *testing.T) {
	mode := os.Getenv(childModeEnv)
	if mode == "" {
		t.Skip("started by BenchmarkResourceBridgeRSS only")
	}
	// The memory limit the binary sets at start (--memory-limit default;
	// GOMEMLIMIT, e.g. from NOTEBRIDGE_BENCH_BRIDGE_ENV, wins).
	executor.ApplyMemoryLimit(executor.DefaultMemoryLimit)
	jc, err := joplin.New(joplin.Config{BaseURL: os.Getenv(childURLEnv), TokenFile: os.Getenv(childTokenEnv)})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(joplinops.Operations(jc, benchLimits)...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, benchExecLimits)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "mcp" {
		srv := mcpadapter.NewServer(ex, registry.MCPStdio, "bench")
		err = mcpadapter.ServeStdio(context.Background(), srv, os.Stdin, os.Stdout, benchExecLimits.MaxArgBytes+1<<20, slog.New(slog.DiscardHandler))
	} else {
		err = serveExecutorFrames(ex, os.Stdin, os.Stdout)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func serveExecutorFrames(ex *executor.Executor, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		header, err := r.ReadString('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name, size, _ := strings.Cut(strings.TrimSuffix(header, "\n"), "\t")
		n, err := strconv.Atoi(size)
		if err != nil || n < 0 || n > benchExecLimits.MaxArgBytes {
			return fmt.Errorf("bad frame header %q", header)
		}
		args := make([]byte, n)
		if _, err := io.ReadFull(r, args); err != nil {
			return err
		}
		res, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, args)
		if derr != nil {
			res, _ = json.Marshal(map[string]any{"error": derr})
		}
		if _, err := out.Write(res); err != nil {
			return err
		}
		if _, err := io.WriteString(out, "\n"); err != nil {
			return err
		}
	}
}

// bridgeProc drives a bridge child process over its stdin and stdout.
type bridgeProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	mode string
	seq  int
}

func startBridge(b *testing.B, mode string, br *resourceBridge) *bridgeProc {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResourceBridgeChild$")
	cmd.Env = append(os.Environ(), childModeEnv+"="+mode, childURLEnv+"="+br.url, childTokenEnv+"="+br.tokenFile)
	cmd.Env = append(cmd.Env, strings.Fields(os.Getenv(bridgeEnvVar))...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &bridgeProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), mode: mode}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	if mode == "mcp" {
		p.send(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		p.read(b)
		p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	return p
}

func (p *bridgeProc) send(b *testing.B, parts ...string) {
	for _, s := range append(parts, "\n") {
		if _, err := io.WriteString(p.in, s); err != nil {
			b.Fatal(err)
		}
	}
}

func (p *bridgeProc) read(b *testing.B) []byte {
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		b.Fatalf("bridge answer: %v", err)
	}
	return line
}

// call runs one operation and returns its result object (for MCP, the
// whole response when it is large, to spare the driver a full decode),
// failing on an error result.
func (p *bridgeProc) call(b *testing.B, name string, args json.RawMessage) json.RawMessage {
	if p.mode != "mcp" {
		p.send(b, name, "\t", strconv.Itoa(len(args)))
		if _, err := p.in.Write(args); err != nil {
			b.Fatal(err)
		}
		line := p.read(b)
		if bytes.HasPrefix(line, []byte(`{"error"`)) {
			b.Fatalf("%s: %s", name, line)
		}
		return line
	}
	p.seq++
	p.send(b, `{"jsonrpc":"2.0","id":`+strconv.Itoa(p.seq)+`,"method":"tools/call","params":{"name":"`+name+`","arguments":`, string(args), `}}`)
	line := p.read(b)
	if len(line) > 1<<20 {
		if bytes.Contains(line[len(line)-200:], []byte(`"isError":true`)) {
			b.Fatalf("%s: %.300s", name, line)
		}
		return line
	}
	var resp struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil || resp.Result.IsError || resp.Result.StructuredContent == nil {
		b.Fatalf("%s: %.300s", name, line)
	}
	return resp.Result.StructuredContent
}

// memKiB reads VmRSS and VmHWM (peak RSS) of a process, in KiB.
func memKiB(b *testing.B, pid int) (rss, hwm int64) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Skipf("no /proc status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "VmRSS:" || f[0] == "VmHWM:") {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			if f[0] == "VmRSS:" {
				rss = n
			} else {
				hwm = n
			}
		}
	}
	return rss, hwm
}

// BenchmarkResourceBridgeRSS runs the round trip of BenchmarkResourceRoundTrip
// in a separate bridge process, so that the fake Joplin and the payload
// held by the benchmark do not count, and reports the bridge's peak RSS
// (VmHWM) above its idle RSS after a warm-up call. "mcp" is the whole
// stdio bridge; "executor" feeds the executor directly.
func BenchmarkResourceBridgeRSS(b *testing.B) {
	for _, mode := range []string{"executor", "mcp"} {
		b.Run(mode, func(b *testing.B) {
			br := newResourceBridge(b, benchLimits, benchExecLimits, nil)
			args, want := benchArgs(randomData(b, benchPayload))
			p := startBridge(b, mode, br)
			p.call(b, "list_resources", json.RawMessage(`{}`))
			time.Sleep(100 * time.Millisecond)
			idle, _ := memKiB(b, p.cmd.Process.Pid)
			var elapsed time.Duration
			for b.Loop() {
				start := time.Now()
				var r struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(p.call(b, "create_resource", args), &r); err != nil {
					b.Fatal(err)
				}
				got := p.call(b, "get_resource_content", json.RawMessage(`{"id":"`+r.ID+`"}`))
				elapsed += time.Since(start)
				if !bytes.Contains(got[:min(len(got), 1024)], []byte(want)) {
					b.Fatal("get_resource_content: wrong sha256")
				}
				p.call(b, "delete_resource", json.RawMessage(`{"id":"`+r.ID+`"}`))
			}
			after, peak := memKiB(b, p.cmd.Process.Pid)
			payloadMiB := float64(benchPayload) / (1 << 20)
			b.ReportMetric(float64(idle)/1024, "idle-MiB")
			b.ReportMetric(float64(peak-idle)/1024, "peak-above-idle-MiB")
			b.ReportMetric(float64(peak-idle)/1024/payloadMiB, "peak/payload")
			b.ReportMetric(float64(after-idle)/1024, "after-above-idle-MiB")
			b.ReportMetric(payloadMiB/(elapsed.Seconds()/float64(b.N)), "MiB/s")
		})
	}
}
