// Package filelocktest lets tests synchronise on a process being blocked on
// a flock, observed in /proc/locks (Linux), instead of sleeping.
package filelocktest

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Waiting reports whether some process is blocked waiting for a flock on
// the file at path. ok is false when it cannot tell (no /proc/locks, or no
// such file yet).
func Waiting(path string) (waiting, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, false
	}
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix {
		return false, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false, false
	}
	defer f.Close()
	// /proc/locks names a file as major:minor:inode, the device in hex.
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: -> FLOCK  ADVISORY  WRITE 4242 00:2e:1234 0 EOF" is a waiter.
		fields := strings.Fields(sc.Text())
		if len(fields) >= 7 && fields[1] == "->" && fields[2] == "FLOCK" && fields[6] == id {
			return true, true
		}
	}
	return false, sc.Err() == nil
}

// AwaitWaiter blocks until some process is blocked on the flock of the file
// at path. It skips the test where /proc/locks does not exist and fails it
// after a minute.
func AwaitWaiter(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no /proc/locks: cannot observe lock waiters")
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if waiting, _ := Waiting(path); waiting {
			return
		}
	}
	t.Fatalf("no process waited for the lock on %s within a minute", path)
}
