package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStdioColdStart measures process exec to the initialize response
// of `notebridge mcp stdio`, reporting the median as median-ms, and the
// resident memory of the idle process after the handshake as idle-rss-MB.
func BenchmarkStdioColdStart(b *testing.B) {
	var samples []time.Duration
	var rss float64
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(binPath, "mcp", "stdio", "--joplin-url", "http://127.0.0.1:1")
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.WriteString(stdin, initialize(1, "2025-06-18")+"\n")
		line, err := bufio.NewReader(stdout).ReadString('\n')
		elapsed := time.Since(start)
		if err != nil || !strings.Contains(line, `"protocolVersion"`) {
			b.Fatalf("no initialize response: %q %v", line, err)
		}
		samples = append(samples, elapsed)
		if i == 0 {
			time.Sleep(200 * time.Millisecond)
			rss = residentMB(cmd.Process.Pid)
		}
		stdin.Close()
		cmd.Wait()
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(rss, "idle-rss-MB")
}

func residentMB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return float64(kb) / 1024
		}
	}
	return -1
}
