package syncstate

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
)

// MinRequestInterval is the shortest time between two request files.
const MinRequestInterval = time.Second

// Requester writes the request file (its content: the time, RFC 3339)
// after notebridge writes to Joplin, at most once per MinRequestInterval:
// a burst of writes gives one request now and one at the end of the
// interval. Request never blocks and never fails; a failure to write the
// file is logged once, until a write succeeds again.
type Requester struct {
	path  string
	log   *slog.Logger
	now   func() time.Time
	after func(time.Duration) <-chan time.Time

	pending chan struct{}
	ctx     context.Context
	stop    context.CancelFunc
	done    chan struct{}
	started sync.Once
	failing bool
	// written, when set, is called after each attempt (tests wait on it).
	written func(error)
}

// NewRequester returns a Requester writing into dir; its writer starts
// with the first request. Close stops it.
func NewRequester(dir string, log *slog.Logger) *Requester {
	return newRequester(dir, log, time.Now, time.After, nil)
}

func newRequester(dir string, log *slog.Logger, now func() time.Time, after func(time.Duration) <-chan time.Time, written func(error)) *Requester {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Requester{
		path: filepath.Join(dir, RequestFile), log: log, now: now, after: after,
		pending: make(chan struct{}, 1), ctx: ctx, stop: cancel, done: make(chan struct{}), written: written,
	}
}

// Request asks for a sync soon. It returns at once.
func (r *Requester) Request() {
	if r == nil {
		return
	}
	r.started.Do(func() { go r.run(r.ctx) })
	select {
	case r.pending <- struct{}{}:
	default: // one is already pending: it covers this write too
	}
}

// Close stops the writer. A request still pending (a write within the
// last interval) is written first: the write it follows is not left
// waiting for the supervisor's interval.
func (r *Requester) Close() {
	if r == nil {
		return
	}
	r.stop()
	r.started.Do(func() { close(r.done) }) // never started: nothing to wait for
	<-r.done
}

func (r *Requester) run(ctx context.Context) {
	defer close(r.done)
	for {
		select {
		case <-ctx.Done():
			r.flush()
			return
		case <-r.pending:
		}
		r.write()
		select {
		case <-ctx.Done():
			r.flush()
			return
		case <-r.after(MinRequestInterval):
		}
	}
}

// flush writes a request still pending.
func (r *Requester) flush() {
	select {
	case <-r.pending:
		r.write()
	default:
	}
}

// write replaces the request file; the error names the file, never notes.
func (r *Requester) write() {
	err := atomicfile.Write(r.path, []byte(r.now().UTC().Format(time.RFC3339)+"\n"), time.Time{})
	switch {
	case err != nil && !r.failing:
		r.failing = true
		r.log.Warn("cannot ask the Joplin container for a sync; its own interval syncs the change", "file", r.path, "err", err)
	case err == nil && r.failing:
		r.failing = false
		r.log.Info("sync requests are written again", "file", r.path)
	}
	if r.written != nil {
		r.written(err)
	}
}
