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
// of `notebridge mcp stdio`, for the Joplin toolset alone and for both,
// reporting the median as median-ms, and the resident memory of the idle
// process after the handshake as idle-rss-MB. With
// NOTEBRIDGE_BENCH_BASELINE_BIN naming another build (say, of the previous
// commit), that binary is started in turn with this one, so the two are
// compared in one run (base-median-ms, base-idle-rss-MB).
func BenchmarkStdioColdStart(b *testing.B) {
	baseline := os.Getenv("NOTEBRIDGE_BENCH_BASELINE_BIN")
	for _, toolsets := range []string{"joplin", "joplin,okf"} {
		b.Run(strings.ReplaceAll(toolsets, ",", "+"), func(b *testing.B) {
			var samples, baseSamples []time.Duration
			var rss, baseRSS float64
			for i := 0; i < b.N; i++ {
				d, r := coldStart(b, binPath, toolsets, i == 0)
				samples = append(samples, d)
				if i == 0 {
					rss = r
				}
				if baseline != "" {
					d, r := coldStart(b, baseline, toolsets, i == 0)
					baseSamples = append(baseSamples, d)
					if i == 0 {
						baseRSS = r
					}
				}
			}
			b.ReportMetric(medianMS(samples), "median-ms")
			b.ReportMetric(rss, "idle-rss-MB")
			if baseline != "" {
				b.ReportMetric(medianMS(baseSamples), "base-median-ms")
				b.ReportMetric(baseRSS, "base-idle-rss-MB")
			}
		})
	}
}

// coldStart starts bin, sends initialize and returns the time to its
// answer; with measureRSS it also waits 200 ms and reads the idle RSS.
func coldStart(b *testing.B, bin, toolsets string, measureRSS bool) (time.Duration, float64) {
	cmd := exec.Command(bin, "mcp", "stdio", "--joplin-url", "http://127.0.0.1:1", "--toolsets", toolsets, "--state-dir", b.TempDir())
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
	rss := 0.0
	if measureRSS {
		time.Sleep(200 * time.Millisecond)
		rss = residentMB(cmd.Process.Pid)
	}
	stdin.Close()
	cmd.Wait()
	return elapsed, rss
}

func medianMS(d []time.Duration) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)/2].Microseconds()) / 1000
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
