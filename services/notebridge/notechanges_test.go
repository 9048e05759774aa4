package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// toolResult is a tools/call result's text content, decoded.
func toolResult(t *testing.T, r rpcResponse, out any) {
	t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 1 || res.IsError {
		t.Fatalf("tool result: %s", r.Result)
	}
	if err := json.Unmarshal([]byte(res.Content[0].Text), out); err != nil {
		t.Fatal(err)
	}
}

func callLine(id int, name string, args any) string {
	raw, _ := json.Marshal(args)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, raw)
}

// TestBridgeKilledMidApplyCompletesOnReapply kills the bridge process
// (SIGKILL) while Joplin serves the third of five note writes. A new
// process re-applying the same plan completes it from the durable receipt,
// Joplin received exactly one write per note, and `notebridge journal
// receipts` lists the receipt without any note text.
func TestBridgeKilledMidApplyCompletesOnReapply(t *testing.T) {
	const token = "notechanges-test-token-0123456789"
	fake := joplinfake.New(token)
	var mu sync.Mutex
	puts := 0
	third := make(chan string, 1)
	release := make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/notes/") {
			mu.Lock()
			puts++
			n := puts
			mu.Unlock()
			if n == 3 {
				fake.ServeHTTP(httptest.NewRecorder(), r) // Joplin writes the note...
				third <- r.URL.Path
				<-release // ...and the bridge dies before the answer.
				return
			}
		}
		fake.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	defer close(release)
	folder := inboxFolder(t, proxy.URL, token)
	var ids []string
	var changes []map[string]any
	for i := 0; i < 5; i++ {
		resp, err := http.Post(proxy.URL+"/notes?token="+token, "application/json",
			strings.NewReader(fmt.Sprintf(`{"parent_id":%q,"title":"n%d","body":"private text %d"}`, folder, i, i)))
		if err != nil {
			t.Fatal(err)
		}
		var n struct{ ID string }
		json.NewDecoder(resp.Body).Decode(&n)
		resp.Body.Close()
		ids = append(ids, n.ID)
		changes = append(changes, map[string]any{"note": n.ID, "op": "append", "text": "reviewed"})
	}
	state := t.TempDir()
	tokenFile := tokenFileB(t, token)
	bridge := func() *exec.Cmd {
		return exec.Command(binPath, "mcp", "stdio", "--state-dir", state, "--joplin-url", proxy.URL, "--joplin-token-file", tokenFile)
	}

	cmd := bridge()
	cmd.Stdin = strings.NewReader(initialize(1, "2025-06-18") + "\n" + callLine(2, "preview_note_changes", map[string]any{"changes": changes}) + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		PlanDigest string `json:"plan_digest"`
	}
	toolResult(t, parseLines(t, string(out))["2"], &p)
	apply := callLine(2, "apply_note_changes", map[string]any{"changes": changes, "plan_digest": p.PlanDigest})

	victim := bridge()
	stdin, err := victim.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	victim.Stdout = io.Discard
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, initialize(1, "2025-06-18")+"\n"+apply+"\n")
	within(t, third, "third note write")
	victim.Process.Kill()
	victim.Wait()

	cmd = bridge()
	cmd.Stdin = strings.NewReader(initialize(1, "2025-06-18") + "\n" + apply + "\n")
	if out, err = cmd.Output(); err != nil {
		t.Fatal(err)
	}
	var a struct {
		Status  string `json:"status"`
		Written int    `json:"written"`
	}
	toolResult(t, parseLines(t, string(out))["2"], &a)
	if a.Status != "completed" || a.Written != 5 {
		t.Fatalf("re-apply: %+v", a)
	}
	perNote := map[string]int{}
	for _, r := range fake.Requests() {
		if r.Method == http.MethodPut {
			perNote[strings.TrimPrefix(r.Path, "/notes/")]++
		}
	}
	for _, id := range ids {
		if perNote[id] != 1 {
			t.Fatalf("note %s written %d times", id, perNote[id])
		}
	}
	list, err := exec.Command(binPath, "journal", "receipts", "--state-dir", state).Output()
	if err != nil || !strings.Contains(string(list), p.PlanDigest) || !strings.Contains(string(list), "written=5 done") {
		t.Fatalf("journal receipts: %s %v", list, err)
	}
	show, err := exec.Command(binPath, "journal", "receipt", p.PlanDigest, "--state-dir", state).Output()
	if err != nil || !strings.Contains(string(show), ids[0]) || strings.Contains(string(show), "private text") {
		t.Fatalf("journal receipt: %s %v", show, err)
	}
}
