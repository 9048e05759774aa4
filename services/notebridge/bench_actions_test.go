package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fastUpstream answers like Joplin for one note, instantly.
func fastUpstream(b *testing.B) *httptest.Server {
	note := []byte(`{"id":"0123456789abcdef0123456789abcdef","parent_id":"fedcba9876543210fedcba9876543210","title":"Benchmark","body":"short body","is_todo":0,"todo_due":0,"todo_completed":0,"created_time":1,"updated_time":2,"deleted_time":0}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			io.WriteString(w, "JoplinClipperServer")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(note)
	}))
	b.Cleanup(srv.Close)
	return srv
}

type loadResult struct {
	requests int
	errors   int
	elapsed  time.Duration
	lat      []time.Duration
}

func (r loadResult) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
}

// load runs workers issuing do() back to back for d and collects latencies.
func load(workers int, d time.Duration, do func(c *http.Client) bool) loadResult {
	var mu sync.Mutex
	res := loadResult{}
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			var lat []time.Duration
			errs := 0
			for time.Since(start) < d {
				t0 := time.Now()
				if !do(c) {
					errs++
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.requests = len(res.lat)
	sort.Slice(res.lat, func(i, j int) bool { return res.lat[i] < res.lat[j] })
	return res
}

// BenchmarkActionsThroughput drives `notebridge serve` (a separate
// process) with Actions get_note calls: bearer auth, rate limiting, schema
// validation, one upstream request each, against a fast fake Joplin. Side
// by side, in the same run, it measures the same workers calling the fake
// directly, so the added latency is visible.
func BenchmarkActionsThroughput(b *testing.B) {
	up := fastUpstream(b)
	actionsTok := "bench-actions-token-0123456789abcdef"
	addrs, exited, stderr := startServeB(b, "--joplin-url", up.URL, "--joplin-token-file", tokenFileB(b, "joplin-bench-token-0123456789"),
		"--actions-enabled", "--actions-token-file", tokenFileB(b, actionsTok), "--actions-rate", "10000000-S",
		"--actions-max-concurrent", "256")
	if exited {
		b.Fatalf("serve exited: %s", stderr)
	}
	url := "http://" + addrs["GPT Actions"] + "/v1/get_note"
	body := []byte(`{"id":"0123456789abcdef0123456789abcdef","include_body":false}`)
	viaActions := func(c *http.Client) bool {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+actionsTok)
		resp, err := c.Do(req)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	direct := func(c *http.Client) bool {
		resp, err := c.Get(up.URL + "/notes/0123456789abcdef0123456789abcdef?token=x")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	load(16, time.Second, viaActions) // warm up connections and schemas
	for _, workers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			const d = 4 * time.Second
			a := load(workers, d, viaActions)
			u := load(workers, d, direct)
			if a.errors > 0 {
				b.Fatalf("%d failed Actions calls", a.errors)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(float64(a.requests)/a.elapsed.Seconds(), "actions-req/s")
			b.ReportMetric(ms(a.pct(0.5)), "actions-p50-ms")
			b.ReportMetric(ms(a.pct(0.99)), "actions-p99-ms")
			b.ReportMetric(float64(u.requests)/u.elapsed.Seconds(), "direct-req/s")
			b.ReportMetric(ms(u.pct(0.99)), "direct-p99-ms")
			b.ReportMetric(ms(a.pct(0.99)-u.pct(0.99)), "added-p99-ms")
		})
	}
}

// BenchmarkStalledConnections opens 1,000 connections to the Actions port
// that send half a request line and stall, and reports the bridge's RSS
// before and while holding them.
func BenchmarkStalledConnections(b *testing.B) {
	up := fastUpstream(b)
	actionsTok := "bench-actions-token-0123456789abcdef"
	addrs, exited, stderr := startServeB(b, "--joplin-url", up.URL, "--actions-enabled", "--actions-token-file", tokenFileB(b, actionsTok),
		"--read-header-timeout", "60s")
	if exited {
		b.Fatalf("serve exited: %s", stderr)
	}
	pid := servePID
	time.Sleep(300 * time.Millisecond)
	idle := residentMB(pid)
	var conns []net.Conn
	for i := 0; i < 1000; i++ {
		c, err := net.Dial("tcp", addrs["GPT Actions"])
		if err != nil {
			b.Fatalf("connection %d: %v", i, err)
		}
		fmt.Fprintf(c, "POST /v1/get_note HTTP/1.1\r\nHost: x\r\n")
		conns = append(conns, c)
	}
	time.Sleep(time.Second)
	held := residentMB(pid)
	alive := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && strings.Contains(err.Error(), "timeout") {
			alive++
		}
		c.Close()
	}
	b.ReportMetric(idle, "idle-rss-MB")
	b.ReportMetric(held, "rss-1000-stalled-MB")
	b.ReportMetric(float64(alive), "stalled-held")
}
