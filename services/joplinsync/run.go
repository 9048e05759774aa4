package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/joplinbatch"
)

// startTimeout bounds Joplin's start-up until its first prompt, and the
// Data API's start.
const startTimeout = 3 * time.Minute

// stepInterval is how often the loop looks at the request file and the
// schedule: a stat, no Joplin request.
const stepInterval = time.Second

// runSupervisor is the container's long-running process: Joplin's Data API
// plus the sync loop, until a signal or until Joplin exits.
func runSupervisor(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", defaultProfile(), "Joplin profile directory")
	port := fs.Int("port", 41183, "the Data API's loopback port (api.port); only used to log it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The log has several writers: the supervisor, its trace, Joplin's stderr.
	stderr = &lockedWriter{w: stderr}
	cfg, cfgErr := loadConfig()
	files := StatusFile{Dir: envOr(envStateDir, "/sync")}
	sup := NewSupervisor(cfg, cfgErr, nil, files, ProfileLog{Path: filepath.Join(*profile, "log.txt")}, stderr)
	sup.now = time.Now
	if err := files.Prepare(); err != nil {
		sup.logf("sync status unavailable: %v", err)
	}
	sup.Starting(time.Now())

	proc, batch, err := startJoplin(*profile, stderr)
	if err != nil {
		return err
	}
	defer proc.stop()
	sup.joplin = batch
	if os.Getenv(envDebug) == "1" {
		sup.joplin = tracedJoplin{batch, sup}
	}

	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if _, err := batch.Ready(startCtx); err != nil {
		return fmt.Errorf("joplin did not start: %w", err)
	}
	if err := sup.Configure(startCtx, time.Now()); err != nil {
		return err
	}
	// --quiet keeps request lines (which carry the API token) off stdout.
	res, err := batch.Run(startCtx, "server start --exit-early --quiet")
	if err != nil {
		return fmt.Errorf("start the Data API: %w", err)
	}
	msg := "Data API starting on 127.0.0.1:" + strconv.Itoa(*port)
	if out := shorten(sup.redact(res.Output)); out != "" {
		msg += " (joplin: " + out + ")"
	}
	sup.logf("%s", msg)
	sup.Started(time.Now())
	return loop(ctx, sup, proc)
}

// loop steps the supervisor once a second until ctx ends or Joplin exits.
func loop(ctx context.Context, sup *Supervisor, proc *joplinProc) error {
	tick := time.NewTicker(stepInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			sup.logf("stopping")
			return nil
		case <-proc.exited:
			return fmt.Errorf("the joplin process exited: %v", proc.waitErr)
		case <-tick.C:
			if err := sup.Step(ctx, time.Now()); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// joplinProc is the running `joplin batch` process.
type joplinProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	exited  chan struct{}
	waitErr error
}

// startJoplin starts `joplin --profile P batch --continue-on-failure -`:
// commands on its stdin, output (with the prompts) on its stdout, its
// stderr passed through to the log.
func startJoplin(profile string, stderr io.Writer) (*joplinProc, *joplinbatch.Batch, error) {
	cmd := exec.Command("joplin", "--profile", profile, "batch", "--continue-on-failure", "-")
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("joplin stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("joplin stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start joplin: %w", err)
	}
	p := &joplinProc{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	batch := joplinbatch.NewBatch(stdin, stdout)
	go func() {
		<-batch.Done() // stdout closed: the process is ending
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, batch, nil
}

// stop ends Joplin: end of input first (the batch returns and the app
// exits, saving its settings), then SIGTERM, then SIGKILL.
func (p *joplinProc) stop() {
	_ = p.stdin.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-p.exited:
			return
		case <-time.After(5 * time.Second):
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		fmt.Fprintln(os.Stderr, "joplinsync:", errors.New("joplin did not exit"))
	}
}

// envDebug turns on a trace of every batch command and its output in the
// log (secrets removed; the output may name notes and hosts).
const envDebug = "NOTEBRIDGE_SYNC_DEBUG"

// tracedJoplin logs each command, its duration and its output, and every
// 30 s the output so far of a command still running.
type tracedJoplin struct {
	*joplinbatch.Batch
	sup *Supervisor
}

func (j tracedJoplin) Run(ctx context.Context, line string) (joplinbatch.Result, error) {
	if strings.HasPrefix(line, "config --import-file ") {
		j.sup.logf("joplin> config --import-file (settings file)")
	} else {
		j.sup.logf("joplin> %s", line)
	}
	start := time.Now()
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				j.sup.logf("joplin: %s still running after %s; output so far:\n%s", line, time.Since(start).Round(time.Second), j.Pending())
			}
		}
	}()
	res, err := j.Batch.Run(ctx, line)
	j.sup.logf("joplin< %s after %s, asked %q, err %v:\n%s", line, time.Since(start).Round(time.Millisecond), res.Asked, err, res.Output)
	return res, err
}

// lockedWriter serialises writes to the log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
