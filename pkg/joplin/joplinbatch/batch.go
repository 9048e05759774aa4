// Package joplinbatch drives one long-lived `joplin --profile P batch
// --continue-on-failure -` process through its stdin and stdout: one
// command line at a time, each after Joplin's `command> ` prompt, its
// output read up to the next prompt. Joplin 3.5.1's batch mode is the one
// arrangement that runs sync beside the Data API safely
// (deploy/joplin/VERIFIED.md).
package joplinbatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// commandPrompt is what `joplin batch -` prints when it is ready for the
// next command line (Joplin's iterateStdin).
const commandPrompt = "command> "

// interactivePrompts are questions a Joplin command may ask on stdin in the
// middle of a batch (a master password, an OAuth code, a login
// confirmation). The batch answers each with an empty line, which cancels
// it, and reports that it was asked.
var interactivePrompts = []string{
	"Enter master password:",
	"Confirm password:",
	"Enter the code provided by Dropbox:",
	"Have you authorised the application login in the above URL?",
}

// Output bounds: a command's output keeps its first keepHead and last
// keepTail bytes (a first sync can print a progress line per batch of
// items); the start says whether the sync began, the end how it ended.
const (
	keepHead = 16 << 10
	keepTail = 240 << 10
)

// Batch drives one long-lived `joplin --profile P batch
// --continue-on-failure -` through its stdin and stdout: a command line
// goes in only after the `command> ` prompt, and its output is everything
// up to the next prompt. One command runs at a time. Its stdout is read
// all the time, so Joplin never blocks on a full pipe.
type Batch struct {
	in    io.Writer
	cmdMu sync.Mutex // one command at a time

	mu     sync.Mutex
	head   []byte // the first keepHead bytes not yet handed out
	tail   []byte // what follows, at most keepTail bytes (older bytes dropped)
	cut    bool   // bytes were dropped between head and tail
	ended  bool
	endErr error
	notify chan struct{} // capacity 1: output arrived or stdout ended
	done   chan struct{} // closed when stdout ends
}

// NewBatch starts reading the process's stdout (out) and writes commands to
// its stdin (in).
func NewBatch(in io.Writer, out io.Reader) *Batch {
	b := &Batch{in: in, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go b.read(out)
	return b
}

func (b *Batch) read(r io.Reader) {
	p := make([]byte, 32<<10)
	for {
		n, err := r.Read(p)
		b.mu.Lock()
		b.append(p[:n])
		if err != nil {
			b.ended = true
			if !errors.Is(err, io.EOF) {
				b.endErr = err
			}
		}
		b.mu.Unlock()
		select {
		case b.notify <- struct{}{}:
		default:
		}
		if err != nil {
			close(b.done)
			return
		}
	}
}

// append adds output, keeping the head and a bounded tail. Called with mu.
func (b *Batch) append(p []byte) {
	if room := keepHead - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - keepTail; over > 0 {
		// Keep a possible prompt split across the cut whole: it is at
		// most len(commandPrompt) bytes, far inside keepTail.
		b.tail = append(b.tail[:0], b.tail[over:]...)
		b.cut = true
	}
}

// pending is the output not yet handed out. Called with mu.
func (b *Batch) pending() string {
	if b.cut {
		return string(b.head) + "\n[…]\n" + string(b.tail)
	}
	return string(b.head) + string(b.tail)
}

// Pending is the output of the running command so far (for a trace).
func (b *Batch) Pending() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending()
}

// reset drops the pending output, keeping rest. Called with mu.
func (b *Batch) reset(rest string) {
	b.head = append(b.head[:0], rest...)
	b.tail = b.tail[:0]
	b.cut = false
}

// Done is closed when the process's output has ended (it is exiting).
func (b *Batch) Done() <-chan struct{} { return b.done }

// ErrExited reports that the Joplin process closed its output: it has
// ended, and the Data API with it.
var ErrExited = errors.New("the joplin process exited")

// Result is one command's output and the interactive questions it asked
// (each answered with an empty line).
type Result struct {
	Output string
	Asked  []string
}

// Ready waits for the first prompt and returns the start-up output.
func (b *Batch) Ready(ctx context.Context) (string, error) {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	r, err := b.untilPrompt(ctx)
	return r.Output, err
}

// Run sends one command line and returns its output up to the next prompt.
// Output that arrived while no command ran (Joplin's own log lines) is
// dropped first. The line must not contain a newline.
func (b *Batch) Run(ctx context.Context, line string) (Result, error) {
	if strings.ContainsAny(line, "\r\n") {
		return Result{}, errors.New("batch: a command line must be one line")
	}
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	b.mu.Lock()
	b.reset("")
	b.mu.Unlock()
	if _, err := io.WriteString(b.in, line+"\n"); err != nil {
		return Result{}, fmt.Errorf("batch: send command: %w", err)
	}
	return b.untilPrompt(ctx)
}

// untilPrompt collects output until the command prompt, answering
// interactive questions on the way.
func (b *Batch) untilPrompt(ctx context.Context) (Result, error) {
	var res Result
	for {
		b.mu.Lock()
		text := b.pending()
		ended, endErr := b.ended, b.endErr
		if i := strings.Index(text, commandPrompt); i >= 0 {
			res.Output += text[:i]
			b.reset(text[i+len(commandPrompt):])
			b.mu.Unlock()
			return res, nil
		}
		q := askedQuestion(text)
		if q != "" || ended {
			res.Output += text
			b.reset("")
		}
		b.mu.Unlock()
		if q != "" {
			res.Asked = append(res.Asked, q)
			if _, err := io.WriteString(b.in, "\n"); err != nil {
				return res, fmt.Errorf("batch: answer %q: %w", q, err)
			}
			continue
		}
		if ended {
			if endErr != nil {
				return res, fmt.Errorf("%w: %w", ErrExited, endErr)
			}
			return res, ErrExited
		}
		select {
		case <-b.notify:
		case <-ctx.Done():
			return res, fmt.Errorf("batch: waiting for the command to finish: %w", ctx.Err())
		}
	}
}

// askedQuestion returns the interactive question the pending output ends
// with, or "".
func askedQuestion(text string) string {
	tail := strings.TrimRight(text, " ")
	for _, q := range interactivePrompts {
		if strings.HasSuffix(tail, q) {
			return q
		}
	}
	return ""
}
