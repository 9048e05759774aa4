package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

const listChanged = "notifications/resources/list_changed"

// TestResourcesListChangedStaysInScope: of the MCP HTTP sessions of the
// static token limited to notebook A and of an OAuth grant on notebook B,
// only those whose scope sees a write are told of it. Each credential has
// a session that writes, one that listens on its GET stream (the test
// waits for the event there) and one that polls: a notification owed to a
// session with no request in flight waits on it and is flushed into the
// answer to its next POST ahead of the result, so a poll shows whether the
// session was told anything since the last.
func TestResourcesListChangedStaysInScope(t *testing.T) {
	_, joplinURL, tf := joplinfake.Serve(t, "fake-joplin-token-0123456789")
	a, b := fakeFolder(t, joplinURL, tf, "A", ""), fakeFolder(t, joplinURL, tf, "B", "")
	s := startOAuthServer(t, "--joplin-url", joplinURL, "--joplin-token-file", tf, "--mcp-notebooks", "A")
	static := readStaticToken(t, s.state)
	_, grant, _ := s.grantWith("B app", "notes:read notes:write", url.Values{"notebook": {b}, "write_notebook": {b}})
	writeA, pollA, listenA := s.session(static), s.session(static), s.listen(static)
	writeB, pollB, listenB := s.session(grant), s.session(grant), s.listen(grant)

	s.toolCall(grant, writeB, "create_note", `{"notebook_id":"`+b+`","title":"In B"}`)
	listenB.await(t, "the B session, of the write in B")
	if told := s.toolCall(static, pollA, "list_notebooks", `{}`); told != 0 {
		t.Fatalf("the A session was told %d times of the write in B", told)
	}
	// Empties the B poll of the write in B (mcp-go may drop a notification
	// it flushes as the answer ends, so its count is not checked).
	s.toolCall(grant, pollB, "list_notebooks", `{}`)
	s.toolCall(static, writeA, "create_note", `{"notebook_id":"`+a+`","title":"In A"}`)
	listenA.await(t, "the A session, of the write in A")
	if told := s.toolCall(grant, pollB, "list_notebooks", `{}`); told != 0 {
		t.Fatalf("the B session was told %d times of the write in A", told)
	}
}

// stream is an open GET /mcp event stream.
type stream struct {
	events chan string // the data lines, in order; closed at the end
}

// listen opens a session of token and its GET stream.
func (s *oauthServer) listen(token string) *stream {
	s.t.Helper()
	h := s.session(token)
	req, _ := http.NewRequestWithContext(s.t.Context(), http.MethodGet, s.base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		s.t.Fatalf("GET stream: %v %v", resp, err)
	}
	st := &stream{events: make(chan string, 64)}
	go func() {
		defer resp.Body.Close()
		defer close(st.events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				st.events <- data
			}
		}
	}()
	return st
}

// await waits for the stream's next event and fails unless it is a
// resources/list_changed notification.
func (st *stream) await(t *testing.T, who string) {
	t.Helper()
	select {
	case ev, ok := <-st.events:
		if !ok || !strings.Contains(ev, listChanged) {
			t.Fatalf("%s: stream event %q (open %v), want %s", who, ev, ok, listChanged)
		}
	case <-t.Context().Done():
		t.Fatalf("%s: no event", who)
	}
}

// toolCall calls tool with args in session h and returns how many
// resources/list_changed notifications the answer carried; it fails on a
// tool error.
func (s *oauthServer) toolCall(token string, h map[string]string, tool, args string) int {
	s.t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)
	resp, raw := s.mcp("Bearer "+token, body, h)
	if resp.StatusCode != 200 || !strings.Contains(raw, `"result"`) || strings.Contains(raw, `"isError":true`) {
		s.t.Fatalf("%s: %d %s", tool, resp.StatusCode, raw)
	}
	return strings.Count(raw, listChanged)
}

// fakeFolder makes a notebook in the fake Joplin and returns its id.
func fakeFolder(t *testing.T, joplinURL, tokenFile, title, parent string) string {
	t.Helper()
	jc, err := joplin.New(joplin.Config{BaseURL: joplinURL, TokenFile: tokenFile})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ ID string }
	if err := jc.Write(context.Background(), "POST", "/folders", nil, map[string]any{"title": title, "parent_id": parent}, &out); err != nil {
		t.Fatal(err)
	}
	return out.ID
}

// readStaticToken is the MCP bearer token serve generated in state.
func readStaticToken(t *testing.T, state string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(state, "mcp-token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}
