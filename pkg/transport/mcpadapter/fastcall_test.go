package mcpadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// diffExecutor serves tools whose results exercise every encoding rule the
// fast path must reproduce.
func diffExecutor(t testing.TB) *executor.Executor {
	t.Helper()
	both := []registry.Transport{registry.MCPStdio, registry.MCPHTTP}
	textIn := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":4194304}},"required":["text"],"additionalProperties":false}`)
	anyOut := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`) // output validation is off
	raw := func(b string) registry.Handler {
		return func(context.Context, json.RawMessage) (any, error) { return json.RawMessage(b), nil }
	}
	ops := []registry.Operation{
		{Name: "echo", InputSchema: textIn, Exposure: both,
			Handler: registry.Typed(func(_ context.Context, in struct {
				Text string `json:"text"`
			}) (any, error) {
				return map[string]string{"echo": in.Text}, nil
			})},
		{Name: "fail", InputSchema: textIn, Exposure: both,
			Handler: registry.Typed(func(_ context.Context, in struct {
				Text string `json:"text"`
			}) (any, error) {
				return nil, domainerr.New(domainerr.NotFound, "no <%s> & more", in.Text).WithDetails(map[string]any{"id": in.Text})
			})},
		// Whitespace, raw HTML characters, a raw U+2028 and U+2029 and
		// invalid UTF-8, as a handler's json.RawMessage may hold them.
		{Name: "raw", Exposure: both, Handler: raw("{ \"a\" :\t\"<b> & \u2028\u2029 \\\" \\u2028 \xff\" ,\n \"n\" : [ 1 , 2.50 , true , null , { } ] }")},
		{Name: "not_json", Exposure: both, Handler: raw(`{"a":`)},
		{Name: "boom", Exposure: both, Handler: func(context.Context, json.RawMessage) (any, error) { panic("boom <x>") }},
		{Name: "http_only", Exposure: []registry.Transport{registry.MCPHTTP}, Handler: raw(`{}`)},
		// Files (registry.Operation.Media), and the same answer from an
		// operation that is not Media.
		{Name: "image", Exposure: both, Media: true, Handler: raw(fileResult("image/png", 3, "AQID"))},
		{Name: "audio", Exposure: both, Media: true, Handler: raw(fileResult("audio/ogg", 3, "AQID"))},
		{Name: "big_image", Exposure: both, Media: true, Handler: raw(fileResult("image/jpeg", MaxInlineMedia+1, "AQID"))},
		{Name: "pdf", Exposure: both, Media: true, Handler: raw(fileResult("application/pdf", 3, "AQID"))},
		{Name: "not_media", Exposure: both, Handler: raw(fileResult("image/png", 3, "AQID"))},
	}
	for i := range ops {
		ops[i].Title, ops[i].Description, ops[i].Toolset, ops[i].Effect = ops[i].Name, "Test.", "test", registry.EffectRead
		if ops[i].InputSchema == nil {
			ops[i].InputSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
		}
		ops[i].OutputSchema = anyOut
	}
	reg, err := registry.New(ops...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.Limits{MaxArgBytes: 8 << 20, MaxDepth: 16, MaxActive: 4})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// fileResult is a Media operation's answer, data_base64 last.
func fileResult(mime string, size int, data string) string {
	return fmt.Sprintf(`{"id":"0123456789abcdef0123456789abcdef","mime":%q,"size":%d,"sha256":"%064d","data_base64":%q}`, mime, size, 0, data)
}

// both runs input through the stdio loop with and without the fast path.
func both(t testing.TB, srv *Server, input string) (fast, slow string) {
	t.Helper()
	run := func(withFast bool) string {
		var out bytes.Buffer
		if err := serveStdio(context.Background(), srv, strings.NewReader(input), &out, 16<<20, slog.New(slog.DiscardHandler), withFast); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	return run(true), run(false)
}

func call(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

func TestFastPathMatchesMCPGo(t *testing.T) {
	srv := NewServer(diffExecutor(t), registry.MCPStdio, "diff")
	rng := rand.New(rand.NewPCG(1, 2))
	blob := make([]byte, 3<<20)
	for i := range blob {
		blob[i] = byte(rng.IntN(256))
	}
	big := base64.StdEncoding.EncodeToString(blob)
	bigJSON, _ := json.Marshal(big[:2<<20] + "<&>\u2028 é 😀 \" \\ \t")
	weird, _ := json.Marshal("<script>&amp;</script> \u2028\u2029 \x00\x01\x1f\x7f é 😀 \"q\" \\ / \b\f\n\r\t")
	cases := []struct {
		name, line string
		fast       bool // whether the fast path must take it
	}{
		{"success", call("1", "echo", `{"text":"hello"}`), true},
		{"html and control characters", call("2", "echo", `{"text":`+string(weird)+`}`), true},
		{"raw html and separators", call("3", "echo", `{"text":"<a href=\"x\">&</a>`+"\u2028\u2029"+`"}`), true},
		{"invalid utf-8 in arguments", call("4", "echo", "{\"text\":\"a\xffb\xc3\"}"), true},
		{"unicode escapes", call("5", "echo", `{"text":"\u00e9\ud83d\ude00\u2028"}`), true},
		{"big payload", call("6", "echo", `{"text":`+string(bigJSON)+`}`), true},
		{"too long for the schema", call("7", "echo", `{"text":"`+big+`"}`), true},
		{"domain error", call("8", "fail", `{"text":"<b>&"}`), true},
		{"schema error", call("9", "echo", `{"text":1,"extra":true}`), true},
		{"raw result", call("10", "raw", `{}`), true},
		{"invalid result", call("11", "not_json", `{}`), true},
		{"handler panic", call("12", "boom", `{}`), true},
		{"spaces everywhere", ` { "jsonrpc" : "2.0" , "id" : 13 , "method" : "tools/call" , "params" : { "arguments" : { "text" : "x" } , "name" : "echo" } } `, true},
		{"escaped member names", `{"jsonrpc":"2.0","id":14,"method":"tools\/call","params":{"\u006eame":"echo","arguments":{"text":"x"}}}`, true},
		{"string id", call(`"a<b>\u00e9"`, "echo", `{"text":"x"}`), true},
		{"float id", call("1.50", "echo", `{"text":"x"}`), true},
		{"exponent id", call("1e3", "echo", `{"text":"x"}`), true},
		{"huge id", call("123456789012345678901234567890", "echo", `{"text":"x"}`), true},
		{"negative id", call("-0", "echo", `{"text":"x"}`), true},
		{"image", call("15", "image", `{}`), true},
		{"audio", call("16", "audio", `{}`), true},
		{"image too large to inline", call("17", "big_image", `{}`), true},
		{"another file", call("18", "pdf", `{}`), true},
		{"a file result of an operation that is not Media", call("19", "not_media", `{}`), true},
		{"unknown tool", call("20", "nope", `{}`), false},
		{"tool not on stdio", call("21", "http_only", `{}`), false},
		{"arguments not an object", call("22", "echo", `"x"`), false},
		{"arguments null", call("23", "echo", `null`), false},
		{"arguments missing", `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"echo"}}`, false},
		{"name not a string", `{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":1,"arguments":{}}}`, false},
		{"null id", call("null", "echo", `{"text":"x"}`), false},
		{"object id", call(`{"a":1}`, "echo", `{"text":"x"}`), false},
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, false},
		{"wrong version", `{"jsonrpc":"1.0","id":26,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, false},
		{"progress token", `{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}}}`, true},
		{"string progress token", `{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"_meta":{"progressToken":"p<1>"},"name":"echo","arguments":{"text":"x"}}}`, true},
		{"empty meta", `{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{}}}`, true},
		{"other meta", `{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1,"traceparent":"00-x"}}}`, false},
		{"meta not an object", `{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":1}}`, false},
		{"modern protocol", `{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, false},
		{"task", `{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"task":{}}}`, false},
		{"capitalised member", `{"jsonrpc":"2.0","id":30,"Method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, false},
		{"duplicate member", `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"nope","name":"echo","arguments":{"text":"x"}}}`, false},
		{"other member", `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}},"extra":1}`, false},
		{"other method", `{"jsonrpc":"2.0","id":33,"method":"tools/list"}`, false},
		{"invalid json", `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"echo","arguments":{"text":tru}}}`, false},
		{"array", `[` + call("35", "echo", `{"text":"x"}`) + `]`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pc, ok := parseToolCall([]byte(c.line))
			if ok = ok && srv.tools[pc.name]; ok != c.fast {
				t.Fatalf("fast path taken: %v, want %v", ok, c.fast)
			}
			fast, slow := both(t, srv, c.line+"\n")
			if fast != slow {
				t.Fatalf("the paths differ:\nfast %.600q\nslow %.600q", fast, slow)
			}
			if c.name == "success" && !strings.Contains(fast, `"structuredContent":{"echo":"hello"}`) {
				t.Fatalf("unexpected answer %q", fast)
			}
			// A tool error is text only: structuredContent must match the
			// outputSchema, which describes success (docs/errors.md).
			if c.name == "domain error" && (strings.Contains(fast, "structuredContent") || !strings.Contains(fast, `"isError":true}}`)) {
				t.Fatalf("error result with structuredContent %q", fast)
			}
		})
	}
}

// FuzzFastPathMatchesMCPGo checks that the fast path writes what mcp-go's
// path writes for any arguments of the echo and raw tools.
func FuzzFastPathMatchesMCPGo(f *testing.F) {
	srv := NewServer(diffExecutor(f), registry.MCPStdio, "diff")
	f.Add("1", "echo", `{"text":"<\u2028>"}`)
	f.Add(`"x"`, "raw", `{}`)
	f.Add("2", "fail", "{\"text\":\"\xff\"}")
	f.Fuzz(func(t *testing.T, id, name, args string) {
		line := call(id, name, args)
		if strings.ContainsAny(line, "\n\r") {
			return
		}
		if fast, slow := both(t, srv, line+"\n"); fast != slow {
			t.Fatalf("the paths differ for %q:\nfast %q\nslow %q", line, fast, slow)
		}
	})
}

// FuzzStreamEncoding checks writeStringBody and writeCompact against
// json.Marshal.
func FuzzStreamEncoding(f *testing.F) {
	f.Add([]byte("a<b>&c\u2028\u2029\xff\xe2\x80\"\\\x00\x7f é"))
	f.Add([]byte(`{ "a" : [1, "x <y>\u2028"], "b":{} }`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got bytes.Buffer
		w := bufio.NewWriterSize(&got, 16)
		w.WriteByte('"')
		writeStringBody(w, b)
		w.WriteByte('"')
		w.Flush()
		if want, _ := json.Marshal(string(b)); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("string %q: got %q, want %q", b, got.Bytes(), want)
		}
		if !json.Valid(b) {
			return
		}
		got.Reset()
		writeCompact(w, b)
		w.Flush()
		want, err := json.Marshal(json.RawMessage(b))
		if err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("compact %q: got %q, want %q (%v)", b, got.Bytes(), want, err)
		}
	})
}

// TestStdioCancelledCallGetsNoResponse: a notifications/cancelled aborts
// the call it names, on the fast path and on mcp-go's, and that call gets
// no response: the next line is the answer to a later ping, and nothing
// else is written before stdin ends.
func TestStdioCancelledCallGetsNoResponse(t *testing.T) {
	ex, started, aborted := waitExecutor(t, registry.MCPStdio)
	for _, fast := range []bool{true, false} {
		srv := NewServer(ex, registry.MCPStdio, "cancel")
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- serveStdio(context.Background(), srv, inR, outW, 1<<20, slog.New(slog.DiscardHandler), fast)
			outW.Close()
		}()
		out := bufio.NewReader(outR)
		io.WriteString(inW, call("7", "wait", `{}`)+"\n")
		<-started
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`+"\n")
		<-aborted
		io.WriteString(inW, `{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n")
		if line, _ := out.ReadString('\n'); !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":8,"result":{}`) {
			t.Errorf("fast path %v: the line after the cancellation is %q, want the ping's answer", fast, line)
		}
		inW.Close()
		rest, _ := io.ReadAll(out)
		if err := <-done; err != nil || len(rest) > 0 {
			t.Errorf("fast path %v: after the ping: %q (%v), want nothing", fast, rest, err)
		}
	}
}

// TestStdioCancellationRightBehindTheCall: a notifications/cancelled on the
// line right after a plain tools/call cancels it: the call is registered
// before the next line is read, so the cancellation cannot overtake it.
// The call gets no response, and stdin's end finds nothing running.
func TestStdioCancellationRightBehindTheCall(t *testing.T) {
	in := call("7", "wait", `{}`) + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}` + "\n"
	for range 20 {
		ex, _, _ := waitExecutor(t, registry.MCPStdio)
		var out bytes.Buffer
		if err := ServeStdio(context.Background(), NewServer(ex, registry.MCPStdio, "cancel"), strings.NewReader(in), &out, 1<<20, slog.New(slog.DiscardHandler)); err != nil || out.Len() > 0 {
			t.Fatalf("after a cancelled call: %q (%v), want nothing", out.String(), err)
		}
	}
}
