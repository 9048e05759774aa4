//go:build unix

package filelock_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/notebridge/notebridge/pkg/internal/filelock"
	"github.com/notebridge/notebridge/pkg/testkit/filelocktest"
)

func mustLock(t *testing.T, path string) func() {
	t.Helper()
	release, err := filelock.Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// lockAsync starts Lock(ctx, path) and returns a channel with its outcome.
func lockAsync(ctx context.Context, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		release, err := filelock.Lock(ctx, path)
		if err == nil {
			release()
		}
		done <- err
	}()
	return done
}

// TestLockExcludesAndHandsOver: a second holder waits (it shows up as a
// waiter, not a holder) and gets the lock when the first releases it. The
// file and its directory are created private.
func TestLockExcludesAndHandsOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "a.lock")
	release := mustLock(t, path)
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Fatalf("%s: mode %v, want %v (%v)", p, fi.Mode(), want, err)
		}
	}
	done := lockAsync(context.Background(), path)
	filelocktest.AwaitWaiter(t, path)
	select {
	case err := <-done:
		t.Fatalf("second Lock returned while the first held it: %v", err)
	default:
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWaitHonoursContext: cancelling ends the wait with the context's error,
// and the abandoned wait gives the lock back once it gets it.
func TestWaitHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.lock")
	release := mustLock(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	done := lockAsync(ctx, path)
	filelocktest.AwaitWaiter(t, path)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	release()
	mustLock(t, path)()
	if _, err := filelock.Lock(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context must not take the lock: %v", err)
	}
}

const helperEnv = "FILELOCK_TEST_HOLD"

// TestMain lets the test binary play a second process that takes the lock,
// says so on stdout, and holds it until it is killed (its stdin never ends).
func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		if _, err := filelock.Lock(context.Background(), path); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("locked\n")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestLockAcrossProcessesReleasedWhenHolderDies: another process's lock
// excludes this one, and the kernel releases it when that process is
// killed, so a crash leaves no stale lock.
func TestLockAcrossProcessesReleasedWhenHolderDies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("helper: %q %v", line, err)
	}
	done := lockAsync(context.Background(), path)
	filelocktest.AwaitWaiter(t, path)
	select {
	case err := <-done:
		t.Fatalf("Lock returned while another process held it: %v", err)
	default:
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
