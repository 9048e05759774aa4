package main

import (
	"bufio"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConfigErrorHoldsUnhealthyWithTheReason: with --hold-on-config-error
// (compose sets it), a refused configuration (OAuth on localhost) keeps the
// process up and `notebridge healthcheck` fails with the reason, where
// docker shows it; without the flag serve exits 1 as before.
func TestConfigErrorHoldsUnhealthyWithTheReason(t *testing.T) {
	args := []string{"serve", "--oauth", "--domain", "localhost", "--listen", "127.0.0.1:0", "--state-dir", t.TempDir(),
		"--joplin-url", "http://127.0.0.1:1", "--joplin-wait", "0s"}
	out, err := exec.Command(binPath, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "OAuth needs") {
		t.Fatalf("without the flag: %v %s", err, out)
	}

	cmd := exec.Command(binPath, append(args, "--hold-on-config-error")...)
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`http://(\S+)/healthz answers CONFIG_ERROR`)
		for sc := bufio.NewScanner(pipe); sc.Scan(); {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(10 * time.Second):
		t.Fatal("no health address logged")
	}
	if a == "" {
		t.Fatal("serve exited instead of holding")
	}
	out, err = exec.Command(binPath, "healthcheck", "--url", "http://"+a+"/healthz").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(string(out), "CONFIG_ERROR") || !strings.Contains(string(out), "OAuth needs") {
		t.Errorf("healthcheck: %v %s", err, out)
	}
	if cmd.ProcessState != nil {
		t.Error("serve exited")
	}
}
