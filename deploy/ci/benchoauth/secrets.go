package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// The legacy client's secret, stored as bcrypt as notebridge did before.
const legacySecret = "legacy-secret-legacy-secret-legacy-secret-0123"

// startFake runs joplinfake with dir/joplin-token and returns its URL.
func startFake(bin, dir string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, "-token-file", filepath.Join(dir, "joplin-token"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	u, err := firstMatch(out, regexp.MustCompile(`^(http://127\.0\.0\.1:\d+)$`))
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, "", fmt.Errorf("joplinfake: %w", err)
	}
	return cmd, u, nil
}

// seedNotes creates a notebook of n notes in the fake Joplin.
func seedNotes(joplinURL string, n int) (string, error) {
	post := func(path string, body map[string]any) (string, error) {
		raw, _ := json.Marshal(body)
		resp, err := http.Post(joplinURL+path+"?token=joplin-token-bench-0123456789abcdef", "application/json", strings.NewReader(string(raw)))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var out struct{ ID string }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			return "", fmt.Errorf("seed %s: %d %v", path, resp.StatusCode, err)
		}
		return out.ID, nil
	}
	folder, err := post("/folders", map[string]any{"title": "bench"})
	if err != nil {
		return "", err
	}
	for i := range n {
		if _, err := post("/notes", map[string]any{"parent_id": folder, "title": fmt.Sprintf("note %d", i), "body": "words"}); err != nil {
			return "", err
		}
	}
	return folder, nil
}

// writeLegacyState seeds state/oauth/state.json with one confidential
// client whose secret is a bcrypt hash (cost 12), in the old format.
func writeLegacyState(state string) error {
	hash, err := bcrypt.GenerateFromPassword([]byte(legacySecret), 12)
	if err != nil {
		return err
	}
	doc := `{"version":1,"clients":{"legacy-client":{"id":"legacy-client","name":"Legacy","secret_hash":"` +
		base64.StdEncoding.EncodeToString(hash) + `","redirect_uris":["https://client.example/cb"],` +
		`"grant_types":["authorization_code","refresh_token"],"scopes":["notes:read"],` +
		`"token_endpoint_auth_method":"client_secret_basic","registered_at":"2026-11-30T10:00:00Z","registered_via":"dcr"}},` +
		`"codes":{},"pkce":{},"access":{},"refresh":{}}`
	if err := os.MkdirAll(filepath.Join(state, "oauth"), 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(state, "oauth", "state.json"), []byte(doc), 0o600)
}

// mcpSession is an initialized MCP session with the static bearer token.
type mcpSession struct {
	s       *server
	headers map[string]string
	id      int
}

func (s *server) session() (*mcpSession, error) {
	tok, err := os.ReadFile(filepath.Join(s.state, "mcp-token"))
	if err != nil {
		return nil, err
	}
	m := &mcpSession{s: s, headers: map[string]string{"Authorization": "Bearer " + strings.TrimSpace(string(tok)),
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}}
	a := s.send(http.MethodPost, "/mcp", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",`+
		`"capabilities":{},"clientInfo":{"name":"benchoauth","version":"1"}}}`, m.headers)
	if a.err != nil || a.status != 200 {
		return nil, fmt.Errorf("initialize: %d %v", a.status, a.err)
	}
	m.headers["Mcp-Session-Id"] = a.header.Get("Mcp-Session-Id")
	m.headers["MCP-Protocol-Version"] = "2025-06-18"
	s.send(http.MethodPost, "/mcp", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, m.headers)
	return m, nil
}

// listNotes times one list_notes call.
func (m *mcpSession) listNotes(folder string) (time.Duration, error) {
	m.id++
	t0 := time.Now()
	a := m.s.send(http.MethodPost, "/mcp", "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_notes","arguments":{"notebook_id":%q}}}`,
		m.id, folder), m.headers)
	took := time.Since(t0)
	if a.err != nil || a.status != 200 || !strings.Contains(a.body, `"result"`) || strings.Contains(a.body, `"isError":true`) {
		return 0, fmt.Errorf("list_notes: %d %v %.200s", a.status, a.err, a.body)
	}
	return took, nil
}

func runSecrets(dir, bin, fakeBin string, n int, legacy bool, duration time.Duration) error {
	fake, joplinURL, err := startFake(fakeBin, dir)
	if err != nil {
		return err
	}
	defer func() { fake.Process.Kill(); fake.Wait() }()
	folder, err := seedNotes(joplinURL, 50)
	if err != nil {
		return err
	}
	client, what := "legacy-client", "a legacy client (bcrypt cost 12 in the state file)"
	if legacy {
		if err := writeLegacyState(filepath.Join(dir, "state")); err != nil {
			return err
		}
	}
	s, err := startServer(bin, dir, joplinURL)
	if err != nil {
		return err
	}
	defer s.stop()
	if !legacy {
		if client, _, err = s.register("", "client_secret_basic"); err != nil {
			return err
		}
		what = "a client registered now"
	}
	m, err := s.session()
	if err != nil {
		return err
	}
	var idle []time.Duration
	for range 100 {
		d, err := m.listNotes(folder)
		if err != nil {
			return err
		}
		idle = append(idle, d)
	}

	cpu0, err := cpu(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	tally := map[string]int{}
	rounds, took := 0, time.Duration(0)
	burstDone := make(chan struct{})
	go func() {
		defer close(burstDone)
		t0 := time.Now()
		for rounds == 0 || time.Since(t0) < duration {
			s.wrongSecrets(client, n, rounds, tally)
			rounds++
		}
		took = time.Since(t0)
	}()
	var busy []time.Duration
	for done := false; !done || len(busy) < 20; {
		select {
		case <-burstDone:
			done = true
		default:
		}
		d, err := m.listNotes(folder)
		if err != nil {
			return err
		}
		busy = append(busy, d)
	}
	cpu1, err := cpu(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("secrets: %d × %d wrong secrets from as many addresses against %s: %.2f s, server CPU %.2f s, answers %s\n",
		rounds, n, what, took.Seconds(), (cpu1 - cpu0).Seconds(), tallyString(tally))
	fmt.Printf("list_notes over MCP: idle %s; during the bursts %s; ratio to idle: median %.2f, mean %.2f, p90 %.2f\n",
		stats(idle), stats(busy), ratio(busy, idle, 50), float64(mean(busy))/float64(mean(idle)), ratio(busy, idle, 90))
	return nil
}

// wrongSecrets sends n token requests at once for client with wrong
// secrets, each from its own address (new ones each round), and tallies
// the answers' statuses.
func (s *server) wrongSecrets(client string, n, round int, tally map[string]int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			form := url.Values{"grant_type": {"authorization_code"}, "code": {"not-a-code"}, "redirect_uri": {"https://client.example/cb"},
				"code_verifier": {"not-a-verifier-not-a-verifier-not-a-verifier-0"}}.Encode()
			auth := base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(client) + ":" + url.QueryEscape(fmt.Sprintf("wrong-secret-%d", i))))
			addr := fmt.Sprintf("100.%d.%d.%d", 65+round/250, round%250, i+1)
			a := s.send(http.MethodPost, "/oauth/token", addr, form, map[string]string{
				"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + auth})
			mu.Lock()
			defer mu.Unlock()
			tally[fmt.Sprintf("%d", a.status)]++
		}()
	}
	wg.Wait()
}

// percentile returns the p-th percentile of d (nearest rank).
func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)*p/100, len(s)-1)]
}

func mean(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, v := range d {
		sum += v
	}
	return sum / time.Duration(len(d))
}

func ratio(a, b []time.Duration, p int) float64 {
	return float64(percentile(a, p)) / float64(percentile(b, p))
}

func stats(d []time.Duration) string {
	return fmt.Sprintf("%d calls, median %s, mean %s, p90 %s, max %s", len(d), ms(percentile(d, 50)), ms(mean(d)), ms(percentile(d, 90)), ms(slices.Max(d)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
