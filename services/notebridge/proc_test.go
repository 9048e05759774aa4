package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// cleanEnv is this process's environment without NOTEBRIDGE_* variables (so
// a developer's settings cannot change a test), plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NOTEBRIDGE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// procLog collects a child's stderr lines as they arrive, reading the
// stream to its end so the child never blocks on a full pipe.
type procLog struct {
	mu    sync.Mutex
	lines []string
	ended bool
	wake  chan struct{} // closed, then replaced, whenever lines or ended change
}

func readLog(r io.Reader) *procLog {
	l := &procLog{wake: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.update(func() { l.lines = append(l.lines, sc.Text()) })
		}
		l.update(func() { l.ended = true })
	}()
	return l
}

func (l *procLog) update(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
	close(l.wake)
	l.wake = make(chan struct{})
}

// String is every line read so far.
func (l *procLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n") + "\n"
}

// waitFor returns the first line for which match is true, waiting for it to
// be logged. ok is false when the stream ended without one. The timeout is
// a watchdog for a hung child, not a synchronisation.
func (l *procLog) waitFor(t testing.TB, match func(string) bool) (line string, ok bool) {
	t.Helper()
	watchdog := time.After(20 * time.Second)
	for seen := 0; ; {
		l.mu.Lock()
		lines, ended, wake := l.lines, l.ended, l.wake
		l.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if match(lines[seen]) {
				return lines[seen], true
			}
		}
		if ended {
			return "", false
		}
		select {
		case <-wake:
		case <-watchdog:
			t.Fatalf("no expected line within 20 s; stderr so far:\n%s", l.String())
		}
	}
}
