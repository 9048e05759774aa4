// Command benchjoplin compares, side by side against a real Joplin, the
// same reads made straight over the Joplin REST API (one kept-alive HTTP
// client) and through `notebridge mcp stdio`: get a note, search, and list
// a notebook's notes. The two paths are interleaved call by call in one run;
// it prints each path's median, their ratio, and the Joplin requests one
// bridge call makes, counted by a small proxy in front of Joplin that a
// second bridge process (not the timed one) talks to.
//
// With -task it runs the scripted agent task of issue 25 instead
// (task.go). deploy/ci/bench-joplin.sh starts Joplin and runs it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	joplinURL := flag.String("joplin-url", "http://127.0.0.1:41184", "Joplin Data API origin")
	tokenFile := flag.String("token-file", "", "file holding the Joplin API token")
	bin := flag.String("bin", "notebridge", "notebridge binary")
	notes := flag.Int("notes", 500, "notes to seed into one notebook")
	n := flag.Int("n", 200, "timed calls per operation and path")
	baseline := flag.String("baseline-bin", "", "a second notebridge binary (say, an earlier commit's) timed in turn with -bin")
	scoped := flag.Bool("scoped", false, "time, in turn with -bin, the same binary limited by --notebooks to the seeded notebook (issue 24)")
	task := flag.Bool("task", false, "run the scripted agent task (search, read, change one line, tag, read again) and the idle count instead")
	idle := flag.Duration("idle", 3*time.Minute, "with -task: how long to count the idle Joplin requests")
	tags := flag.Int("tags", 20, "with -task: tags to seed, each linked to a share of the notes")
	restart := flag.String("restart-joplin", "", "timed run: a command (run by sh) that restarts Joplin after seeding, so that Joplin's own search holds the corpus")
	flag.Parse()
	if *scoped && *baseline != "" {
		log.Fatal("-scoped and -baseline-bin both take the second column; choose one")
	}
	var err error
	if *task {
		err = runTask(*joplinURL, *tokenFile, *bin, *notes, *idle, *tags)
	} else {
		err = run(*joplinURL, *tokenFile, *bin, *baseline, *restart, *scoped, *notes, *n)
	}
	if err != nil {
		log.Fatal(err)
	}
}

type rest struct {
	base, token string
	c           *http.Client
}

func (r rest) do(method, path string, q url.Values, body any) ([]byte, error) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("token", r.token)
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+path+"?"+q.Encode(), rd)
	if err != nil {
		return nil, err
	}
	resp, err := r.c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	return b, err
}

// get reads path and decodes the answer, as a client of the REST API would.
func (r rest) get(path string, q url.Values) error {
	b, err := r.do(http.MethodGet, path, q, nil)
	if err != nil {
		return err
	}
	var v map[string]any
	return json.Unmarshal(b, &v)
}

// bridge is one `notebridge mcp stdio` process after the handshake.
type bridge struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
	// called: a tool call was made (the first one checks Joplin's identity)
	called bool
	// instructions is the initialize result's instructions, which many
	// clients put into the model's context.
	instructions string
	closed       bool
}

func startBridge(bin, joplinURL, tokenFile, stateDir string, extra ...string) (*bridge, error) {
	args := append([]string{"mcp", "stdio", "--joplin-url", joplinURL, "--joplin-token-file", tokenFile, "--state-dir", stateDir}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &bridge{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	line, err := b.rpc("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"benchjoplin","version":"1"}}`)
	if err != nil {
		return nil, err
	}
	var hello struct {
		Result struct {
			Instructions string `json:"instructions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &hello); err != nil {
		return nil, err
	}
	b.instructions = hello.Result.Instructions
	_, err = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return b, err
}

func (b *bridge) rpc(method, params string) ([]byte, error) {
	return b.rpcWant(method, params, false)
}

// rpcWant sends one request and reads its answer; wantToolError expects a
// tool result flagged isError (a call refused before reaching Joplin).
// The answer is decoded once, as an MCP client decodes a message.
func (b *bridge) rpcWant(method, params string, wantToolError bool) ([]byte, error) {
	b.id++
	if _, err := fmt.Fprintf(b.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", b.id, method, params); err != nil {
		return nil, err
	}
	line, msg, err := b.readResponse()
	if err != nil {
		return nil, err
	}
	result, _ := msg["result"].(map[string]any)
	isError, _ := result["isError"].(bool)
	if msg["error"] != nil || result == nil || isError != wantToolError {
		return nil, fmt.Errorf("%s failed: %.300s", method, line)
	}
	return line, nil
}

// readResponse reads lines until a response (one with an id), decoding
// each once: the server may send notifications first
// (resources/list_changed after a write).
func (b *bridge) readResponse() ([]byte, map[string]any, error) {
	for {
		line, err := b.out.ReadBytes('\n')
		if err != nil {
			return nil, nil, err
		}
		var msg map[string]any
		if err := json.Unmarshal(line, &msg); err != nil {
			return nil, nil, fmt.Errorf("an answer that is not JSON: %w: %.300s", err, line)
		}
		if msg["id"] != nil {
			return line, msg, nil
		}
	}
}

// call runs one tool, its answer decoded as an MCP client decodes it.
func (b *bridge) call(tool, args string, wantToolError bool) error {
	_, err := b.rpcWant("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args), wantToolError)
	return err
}

// close ends the process; a second close does nothing.
func (b *bridge) close() {
	if b.closed {
		return
	}
	b.closed = true
	b.in.Close()
	b.cmd.Wait()
}

// counter is a reverse proxy in front of Joplin that counts requests and
// keeps each one's method, path and query.
type counter struct {
	mu   sync.Mutex
	reqs []string
}

// since returns the requests after the first n.
func (c *counter) since(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.reqs[n:]...)
}

func (c *counter) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reqs)
}

func startCounter(target string) (string, *counter, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", nil, err
	}
	c := &counter{}
	rp := httputil.NewSingleHostReverseProxy(u)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		q.Del("token")
		c.mu.Lock()
		c.reqs = append(c.reqs, r.Method+" "+r.URL.Path+"?"+q.Encode())
		c.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	return "http://" + ln.Addr().String(), c, nil
}

type workload struct {
	name      string
	restPath  string
	restQuery url.Values
	tool      string
	args      string
	// refused: the bridge refuses the call before any Joplin request (the
	// stdio and executor floor).
	refused bool
}

// newREST returns a kept-alive REST client of the Joplin at joplinURL.
func newREST(joplinURL, tokenFile string) (rest, error) {
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		return rest{}, err
	}
	return rest{base: joplinURL, token: strings.TrimSpace(string(tok)), c: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}, nil
}

func run(joplinURL, tokenFile, bin, baselineBin, restart string, scoped bool, notes, n int) error {
	return withCorpus(joplinURL, tokenFile, func(corp *corpus) error {
		return runTimed(corp, joplinURL, tokenFile, bin, baselineBin, restart, scoped, notes, n)
	})
}

// runTimed plays the timed calls on the task's corpus (corpus.go): notes
// of about 2 KB, one in twenty mentioning the search word, and the task's
// note.
func runTimed(corp *corpus, joplinURL, tokenFile, bin, baselineBin, restart string, scoped bool, notes, n int) (err error) {
	r := corp.r
	seedStart := time.Now()
	if err := corp.seed(notes, 0); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	note, err := corp.note("Gardens roadmap", taskNoteBody)
	if err != nil {
		return err
	}
	folder := corp.folder
	fmt.Printf("seeded %d notes of about 2 KB in one notebook in %.1f s (one in twenty mentions the search word)\n", notes, time.Since(seedStart).Seconds())
	if restart != "" {
		// Joplin's own search sees notes made since its start only after
		// a restart: without one it would answer the REST search from an
		// index that lacks the corpus.
		if err := restartJoplin(restart, r); err != nil {
			return err
		}
		fmt.Println("Joplin restarted after seeding, so that its own search holds the corpus")
	}
	noteFields := "id,parent_id,title,body,is_todo,todo_due,todo_completed,created_time,updated_time,deleted_time"
	// Each REST request asks for what the bridge's call answers: the
	// fields its answer carries, ten search hits, a page of 100 notes.
	work := []workload{
		{"get_note", "/notes/" + note, url.Values{"fields": {noteFields}}, "get_note", fmt.Sprintf(`{"id":%q}`, note), false},
		{"search", "/search", url.Values{"query": {"gardens"}, "type": {"note"}, "fields": {"id,parent_id,title,deleted_time,updated_time"}, "limit": {"10"}}, "search", `{"query":"gardens"}`, false},
		{"stdio floor: get_note refused (bad id), no Joplin request", "/notes/" + note, url.Values{"fields": {noteFields}}, "get_note", `{"id":"not-an-id"}`, true},
		{"list_notes, page of 100", "/folders/" + folder + "/notes", url.Values{"fields": {"id,parent_id,title,is_todo,todo_due,todo_completed,created_time,updated_time,deleted_time"}, "limit": {"100"}, "order_by": {"updated_time"}, "order_dir": {"DESC"}}, "list_notes", fmt.Sprintf(`{"notebook_id":%q,"limit":100}`, folder), false},
	}

	// Each bridge starts over a search index built before (warmIndex), as
	// a running bridge has one: no timed or counted call falls back to
	// Joplin's search while the index builds, nor counts the build.
	warm := func(bin, joplinURL string) (string, error) {
		state := mustTemp()
		corp.dirs = append(corp.dirs, state)
		return state, warmIndex(bin, joplinURL, tokenFile, state)
	}
	state, err := warm(bin, joplinURL)
	if err != nil {
		return err
	}
	timed, err := startBridge(bin, joplinURL, tokenFile, state)
	if err != nil {
		return fmt.Errorf("start bridge: %w", err)
	}
	defer timed.close()
	proxyURL, count, err := startCounter(joplinURL)
	if err != nil {
		return err
	}
	countedState, err := warm(bin, proxyURL)
	if err != nil {
		return err
	}
	counted, err := startBridge(bin, proxyURL, tokenFile, countedState)
	if err != nil {
		return fmt.Errorf("start counted bridge: %w", err)
	}
	defer counted.close()
	var base *bridge
	switch {
	case baselineBin != "":
		baseState, err := warm(baselineBin, joplinURL)
		if err != nil {
			return err
		}
		if base, err = startBridge(baselineBin, joplinURL, tokenFile, baseState); err != nil {
			return fmt.Errorf("start baseline bridge: %w", err)
		}
		defer base.close()
	case scoped:
		scopedState, err := warm(bin, joplinURL)
		if err != nil {
			return err
		}
		if base, err = startBridge(bin, joplinURL, tokenFile, scopedState, "--notebooks", folder); err != nil {
			return fmt.Errorf("start scoped bridge: %w", err)
		}
		defer base.close()
		baselineBin = bin + " --notebooks <the seeded notebook>"
	}

	fmt.Printf("%d timed calls per operation and path, interleaved (REST, bridge, REST, ...) after 20 warm-up pairs\n\n", n)
	if base != nil {
		fmt.Printf("baseline: %s, timed in turn (REST, bridge, baseline, ...)\n\n", baselineBin)
		fmt.Printf("| Operation | REST median | bridge (MCP stdio) median | ratio | baseline median | baseline ratio | baseline / bridge | Joplin requests per bridge call |\n|---|---|---|---|---|---|---|---|\n")
	} else {
		fmt.Printf("| Operation | REST median | bridge (MCP stdio) median | ratio | Joplin requests per bridge call |\n|---|---|---|---|---|\n")
	}
	for _, w := range work {
		var viaREST, viaBridge, viaBase []time.Duration
		for i := range n + 20 {
			start := time.Now()
			if err := r.get(w.restPath, cloneValues(w.restQuery)); err != nil {
				return err
			}
			d := time.Since(start)
			start = time.Now()
			if err := timed.call(w.tool, w.args, w.refused); err != nil {
				return err
			}
			if i >= 20 {
				viaREST, viaBridge = append(viaREST, d), append(viaBridge, time.Since(start))
			}
			if base != nil {
				start = time.Now()
				if err := base.call(w.tool, w.args, w.refused); err != nil {
					return err
				}
				if i >= 20 {
					viaBase = append(viaBase, time.Since(start))
				}
			}
		}
		before := count.len()
		const countCalls = 10
		for range countCalls {
			if err := counted.call(w.tool, w.args, w.refused); err != nil {
				return err
			}
		}
		perCall := float64(count.len()-before) / countCalls
		mr, mb := median(viaREST), median(viaBridge)
		if base != nil {
			mbase := median(viaBase)
			fmt.Printf("| %s | %.3f ms | %.3f ms | %.2f× | %.3f ms | %.2f× | %.2f× | %.1f |\n", w.name, ms(mr), ms(mb), float64(mb)/float64(mr),
				ms(mbase), float64(mbase)/float64(mr), float64(mbase)/float64(mb), perCall)
			continue
		}
		fmt.Printf("| %s | %.3f ms | %.3f ms | %.2f× | %.1f |\n", w.name, ms(mr), ms(mb), float64(mb)/float64(mr), perCall)
	}
	return nil
}

// restartJoplin runs cmd and waits (up to 3 min) until Joplin answers an
// authenticated request again.
func restartJoplin(cmd string, r rest) error {
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		return fmt.Errorf("restart Joplin (%s): %v: %s", cmd, err, out)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := r.get("/folders", url.Values{"limit": {"1"}, "fields": {"id"}})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer from Joplin after its restart: %w", err)
		}
		time.Sleep(time.Second)
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func mustTemp() string {
	d, err := os.MkdirTemp("", "benchjoplin-state-")
	if err != nil {
		log.Fatal(err)
	}
	return d
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
