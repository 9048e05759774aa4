package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// openFDs counts the open file descriptors of process pid.
func openFDs(pid int) int {
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return -1
	}
	return len(ents)
}

func mcpInitialize(c *http.Client, url, token string) (string, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("initialize: status %d", resp.StatusCode)
	}
	return resp.Header.Get("Mcp-Session-Id"), nil
}

// waitFor polls cond every 250 ms for up to limit and returns how long it
// took, or -1.
func waitFor(limit time.Duration, cond func() bool) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return -1
}

// BenchmarkMCPSessionChurn sends 20,000 initialize calls (4 keep-alive
// workers, no DELETE) to `notebridge mcp serve`. "default-caps" keeps the
// default bounds, so most calls are refused (SESSION_LIMIT); "expiry"
// raises the caps above 20,000 and sets a 3 s session TTL, then waits (up
// to 5 min) for the server's RSS to come back within 16 MiB of where it
// started. Both report RSS and open file descriptors before and after.
func BenchmarkMCPSessionChurn(b *testing.B) {
	b.Run("default-caps", func(b *testing.B) { sessionChurn(b, false) })
	b.Run("expiry", func(b *testing.B) {
		sessionChurn(b, true, "--mcp-session-ttl", "3s", "--mcp-max-sessions-per-credential", "100000", "--mcp-max-sessions", "100000")
	})
}

func sessionChurn(b *testing.B, wantAll bool, args ...string) {
	const calls, workers = 20000, 4
	addr, pid, token := startMCPServe(b, append([]string{"--joplin-url", "http://127.0.0.1:1"}, args...)...)
	url := "http://" + addr + "/mcp"
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	time.Sleep(time.Second)
	rss0, fd0 := residentMB(pid), openFDs(pid)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, refused := 0, 0
	var firstErr error
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < calls; i += workers {
				_, err := mcpInitialize(c, url, token)
				mu.Lock()
				switch {
				case err == nil:
					accepted++
				case strings.Contains(err.Error(), "status 429"), strings.Contains(err.Error(), "status 503"):
					refused++
				case firstErr == nil:
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil || wantAll && accepted != calls {
		b.Fatalf("accepted %d of %d: %v", accepted, calls, firstErr)
	}
	elapsed := time.Since(start)
	peak := residentMB(pid)
	c.CloseIdleConnections()
	waitFor(10*time.Second, func() bool { return openFDs(pid) <= fd0 })
	settle := time.Duration(0)
	if wantAll {
		settle = waitFor(5*time.Minute, func() bool { return residentMB(pid) <= rss0+16 })
	}
	after, fd1 := residentMB(pid), openFDs(pid)
	b.ReportMetric(float64(calls)/elapsed.Seconds(), "initialize/s")
	b.ReportMetric(float64(accepted), "accepted")
	b.ReportMetric(float64(refused), "refused")
	b.ReportMetric(rss0, "rss-start-MB")
	b.ReportMetric(peak, "rss-peak-MB")
	b.ReportMetric(after, "rss-after-MB")
	b.ReportMetric(settle.Seconds(), "s-to-within-16MB")
	b.ReportMetric(float64(fd0), "fd-start")
	b.ReportMetric(float64(fd1), "fd-after")
}

// BenchmarkMCPIdleStreams opens 500 authenticated GET /mcp streams (one
// connection each, over 50 sessions) to `notebridge mcp serve` with a 2 s
// stream idle timeout and a per-credential cap of 1,000, and measures how
// long each stays open after its headers arrive. It reports the longest and shortest lifetime, how
// many the server ended, and the server's file descriptors before, while
// holding them, and after.
func BenchmarkMCPIdleStreams(b *testing.B) {
	const streams, sessions = 500, 50
	addr, pid, token := startMCPServe(b, "--joplin-url", "http://127.0.0.1:1", "--mcp-stream-idle-timeout", "2s", "--mcp-max-streams-per-credential", "1000")
	url := "http://" + addr + "/mcp"
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams}}
	ids := make([]string, sessions)
	for i := range ids {
		id, err := mcpInitialize(c, url, token)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = id
	}
	c.CloseIdleConnections()
	time.Sleep(500 * time.Millisecond)
	fd0 := openFDs(pid)
	type life struct {
		d     time.Duration
		ended bool
	}
	lives := make(chan life, streams)
	opened := make(chan struct{}, streams)
	for i := range streams {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", ids[i%sessions])
			resp, err := c.Do(req)
			start := time.Now() // the stream is open: its headers arrived
			opened <- struct{}{}
			if err != nil || resp.StatusCode != 200 {
				lives <- life{}
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lives <- life{d: time.Since(start), ended: err == nil}
		}()
	}
	for range streams {
		<-opened
	}
	held := openFDs(pid)
	var longest, shortest time.Duration = 0, time.Hour
	ended := 0
	for range streams {
		l := <-lives
		if l.ended {
			ended++
		}
		longest, shortest = max(longest, l.d), min(shortest, l.d)
	}
	c.CloseIdleConnections()
	back := waitFor(30*time.Second, func() bool { return openFDs(pid) <= fd0 })
	b.ReportMetric(float64(ended), "streams-ended-by-server")
	b.ReportMetric(shortest.Seconds(), "shortest-open-s")
	b.ReportMetric(longest.Seconds(), "longest-open-s")
	b.ReportMetric(float64(fd0), "fd-start")
	b.ReportMetric(float64(held), "fd-holding")
	b.ReportMetric(float64(openFDs(pid)), "fd-after")
	b.ReportMetric(back.Seconds(), "s-to-fd-start")
}
