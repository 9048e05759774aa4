package joplinbatch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// fakeBatchProcess plays `joplin batch -`: start-up noise, then a prompt;
// for each line read, the answer the script gives (which may ask a question
// first), then a prompt. It ends (closing its output) on "quit" or EOF.
func fakeBatchProcess(t *testing.T, script func(line string, ask func(q string) string) string) (io.WriteCloser, io.Reader, chan []string) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	seen := make(chan []string, 1)
	go func() {
		var lines []string
		defer func() { seen <- lines; outW.Close() }()
		in := bufio.NewReader(inR)
		io.WriteString(outW, "Joplin starting\n")
		// The prompt arrives in two writes, as a pipe may deliver it.
		io.WriteString(outW, "comm")
		io.WriteString(outW, "and> ")
		for {
			line, err := in.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			lines = append(lines, line)
			if line == "quit" {
				return
			}
			ask := func(q string) string {
				io.WriteString(outW, q+" ")
				a, _ := in.ReadString('\n')
				return strings.TrimSuffix(a, "\n")
			}
			io.WriteString(outW, script(line, ask))
			io.WriteString(outW, commandPrompt)
		}
	}()
	return inW, outR, seen
}

func TestBatchRunsOneCommandPerPrompt(t *testing.T) {
	in, out, seen := fakeBatchProcess(t, func(line string, _ func(string) string) string {
		return "did " + line + "\nsecond line\n"
	})
	b := NewBatch(in, out)
	ctx := context.Background()
	start, err := b.Ready(ctx)
	if err != nil || start != "Joplin starting\n" {
		t.Fatalf("Ready = %q, %v", start, err)
	}
	for _, cmd := range []string{"server start --exit-early --quiet", "sync"} {
		res, err := b.Run(ctx, cmd)
		if err != nil {
			t.Fatal(err)
		}
		if res.Output != "did "+cmd+"\nsecond line\n" {
			t.Errorf("Run(%q) = %q", cmd, res.Output)
		}
	}
	if _, err := b.Run(ctx, "sync\nquit"); err == nil {
		t.Error("a command with a newline was sent")
	}
	if _, err := b.Run(ctx, "quit"); !errors.Is(err, ErrExited) {
		t.Errorf("after the process ended: err = %v, want ErrExited", err)
	}
	if got := <-seen; strings.Join(got, "|") != "server start --exit-early --quiet|sync|quit" {
		t.Errorf("the process read %q", got)
	}
}

// TestBatchAnswersQuestionsWithAnEmptyLine: a command that asks for a
// master password gets an empty answer (cancel), not the next command,
// and the question is reported.
func TestBatchAnswersQuestionsWithAnEmptyLine(t *testing.T) {
	answers := make(chan string, 1)
	in, out, _ := fakeBatchProcess(t, func(line string, ask func(string) string) string {
		if line == "e2ee decrypt" {
			answers <- ask("Enter master password:")
			return "Operation cancelled\n"
		}
		return ""
	})
	b := NewBatch(in, out)
	ctx := context.Background()
	if _, err := b.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctx, "e2ee decrypt")
	if err != nil {
		t.Fatal(err)
	}
	if a := <-answers; a != "" {
		t.Errorf("the question was answered %q, want an empty line", a)
	}
	if len(res.Asked) != 1 || res.Asked[0] != "Enter master password:" || !strings.Contains(res.Output, "Operation cancelled") {
		t.Errorf("Run = %+v", res)
	}
}

// TestBatchTimesOutWithoutPrompt: a command whose prompt never comes ends
// with the context's error.
func TestBatchTimesOutWithoutPrompt(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer outW.Close()
	written := make(chan struct{})
	go func() {
		io.WriteString(outW, commandPrompt)
		bufio.NewReader(inR).ReadString('\n')
		io.WriteString(outW, "Starting synchronisation...\n")
		close(written)
	}()
	b := NewBatch(inW, outR)
	if _, err := b.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := b.Run(ctx, "sync")
		got <- err
	}()
	<-written
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestBatchKeepsHeadAndTailOfLongOutput: a command printing more than the
// bounds keeps its first and last lines, and the prompt is still found.
func TestBatchKeepsHeadAndTailOfLongOutput(t *testing.T) {
	in, out, _ := fakeBatchProcess(t, func(string, func(string) string) string {
		var sb strings.Builder
		sb.WriteString("Starting synchronisation...\n")
		for sb.Len() < 2*(keepHead+keepTail) {
			sb.WriteString("Fetched items: 123/456.\n")
		}
		sb.WriteString("Last error: done badly\n")
		return sb.String()
	})
	b := NewBatch(in, out)
	if _, err := b.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(context.Background(), "sync")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) > keepHead+keepTail+100 {
		t.Errorf("output kept %d bytes", len(res.Output))
	}
	if !strings.HasPrefix(res.Output, "Starting synchronisation...") || !strings.HasSuffix(res.Output, "Last error: done badly\n") {
		t.Errorf("head or tail lost: %q … %q", res.Output[:40], res.Output[len(res.Output)-40:])
	}
}
