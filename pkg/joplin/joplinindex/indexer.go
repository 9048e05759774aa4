// Package joplinindex keeps the embedded search index (pkg/joplin/searchindex)
// in step with Joplin: a background build page by page, Joplin's /events
// change feed polled from a cursor saved with the index (about once a
// second while searches or writes arrive, backing off to every 30 s when
// idle, and caught up right before a search), a light check of notebooks
// and tags every minute that re-reads only what moved, a full
// reconciliation hourly for what /events does not report (tag links made
// elsewhere), and synchronous updates after notebridge's own writes.
// Nothing starts until the first call that needs the index.
package joplinindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

// State is where the index stands.
type State string

// States. Only Ready answers searches; the others fall back to Joplin.
const (
	Idle     State = "idle"     // not opened yet (opened on first use)
	Building State = "building" // (re)building from Joplin
	Ready    State = "ready"    // serving, kept fresh
	Paused   State = "paused"   // Joplin unreachable: indexing waits and retries
	Failed   State = "failed"   // the index could not be written (disk full, ...): retried
)

// Config sets an Indexer up.
type Config struct {
	// Path is the index file.
	Path string
	// Poll is the /events polling interval while searches or writes arrive
	// (default 1 s).
	Poll time.Duration
	// IdlePoll is the interval it backs off to, doubling per idle poll
	// (default DefaultIdlePoll, at least Poll).
	IdlePoll time.Duration
	// CatchUp: a search first has /events polled when the last poll is
	// older than this (default Poll).
	CatchUp time.Duration
	// Reconcile is the interval of the light check of notebooks and tags
	// (default 60 s).
	Reconcile time.Duration
	// FullReconcile is the interval of the full reconciliation pass
	// (default DefaultFullReconcile, at least Reconcile).
	FullReconcile time.Duration
	// MaxNotes bounds a build (default 100,000).
	MaxNotes int
	// SyncGeneration, when set, returns a number that changes after every
	// sync the Joplin container completes (ok false: not known). A change
	// makes the next poll re-read the tag links, which /events does not
	// report, so notes tagged by a sync are found by tag within a poll.
	SyncGeneration func() (gen int64, ok bool)
	Log            *slog.Logger
	// Applied, when set, is called after each batch of changes is applied
	// (build done, events applied, reconciliation done, chunks embedded):
	// tests wait on it.
	Applied func(what string)
	// Meaning, with a provider, turns search by meaning on.
	Meaning MeaningConfig
}

// Status is what joplin_status reports of the index.
type Status struct {
	State State `json:"state" schema:"enum=idle|building|ready|paused|failed"`
	Notes int   `json:"notes" schema:"min=0,max=2147483648"`
	// Error is the last indexing problem, while not Ready.
	Error string `json:"error,omitempty" schema:"max=2000"`
	// Meaning is the progress of search by meaning, when configured.
	Meaning *MeaningStatus `json:"meaning,omitempty"`
}

// Indexer owns the index and its background loop.
type Indexer struct {
	c    *joplin.Client
	cfg  Config
	once sync.Once
	stop context.CancelFunc
	done chan struct{}
	// opened is closed once the first attempt to open the index is over.
	opened     chan struct{}
	openedOnce sync.Once

	// rebuild asks the loop to build the index again from scratch.
	rebuild atomic.Bool
	// idlePolls counts the polls since the last search or write; lastPoll
	// is when the last step ended (Unix ns).
	idlePolls atomic.Int32
	lastPoll  atomic.Int64
	// lastCatchUp is when the last step a search asked for began (Unix
	// ns): only such a step spares the searches right after it a poll.
	lastCatchUp atomic.Int64
	// wake cuts an idle wait short; catchUps asks for a step now and is
	// closed after it; asked is the request not yet taken by the loop,
	// which a search arriving meanwhile waits for too.
	wake     chan struct{}
	catchUps chan chan struct{}
	askMu    sync.Mutex
	asked    chan struct{}
	// meaning is search by meaning; nil when off.
	meaning *meaning

	mu sync.Mutex
	ix *searchindex.Index
	// servable: the index holds a complete build (it may lag during an
	// outage or a write failure, but answers).
	servable bool
	state    State
	notes    int
	errMsg   string
	// building: a build is under way; the writes made meanwhile wait in
	// pending (at most maxPending; beyond, pendingLost) and are applied
	// once the build is servable, so none falls between the build's reads
	// and the first poll.
	building    bool
	pending     []joplin.Write
	pendingLost bool
}

// maxPending bounds the writes kept during a build.
const maxPending = 1000

// New returns an Indexer for Joplin client c, which tells it of every
// write made through c (Wrote). It does nothing until Start, Search or a
// write.
func New(c *joplin.Client, cfg Config) *Indexer {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.IdlePoll <= 0 {
		cfg.IdlePoll = DefaultIdlePoll
	}
	cfg.IdlePoll = max(cfg.IdlePoll, cfg.Poll)
	if cfg.CatchUp <= 0 {
		cfg.CatchUp = cfg.Poll
	}
	if cfg.Reconcile <= 0 {
		cfg.Reconcile = time.Minute
	}
	if cfg.FullReconcile <= 0 {
		cfg.FullReconcile = DefaultFullReconcile
	}
	cfg.FullReconcile = max(cfg.FullReconcile, cfg.Reconcile)
	if cfg.MaxNotes <= 0 {
		cfg.MaxNotes = 100_000
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	x := &Indexer{c: c, cfg: cfg, state: Idle, done: make(chan struct{}), opened: make(chan struct{}),
		wake: make(chan struct{}, 1), catchUps: make(chan chan struct{}, 1), meaning: newMeaning(cfg.Meaning)}
	c.Observe(x.Wrote)
	return x
}

// Start starts the background loop once; later calls do nothing.
func (x *Indexer) Start() {
	x.once.Do(func() {
		// The index mirrors the whole Joplin: its requests are
		// notebridge's own work.
		ctx, cancel := context.WithCancel(principal.With(context.Background(), principal.System()))
		x.stop = cancel
		go x.run(ctx)
	})
}

// Close stops the loop and closes the index.
func (x *Indexer) Close() error {
	if x == nil {
		return nil
	}
	x.once.Do(func() { close(x.done) }) // never started: nothing to wait for
	if x.stop != nil {
		x.stop()
		<-x.done
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ix != nil {
		err := x.ix.Close()
		x.ix = nil
		return err
	}
	return nil
}

// Rebuild makes the loop build the index again from scratch: the Joplin
// it mirrors was replaced by another (pkg/joplin/identity). Until the build is
// done, search falls back to Joplin's own.
func (x *Indexer) Rebuild() {
	x.rebuild.Store(true)
	x.mu.Lock()
	x.servable = false
	x.mu.Unlock()
	x.meaning.forget()
}

// Status reports the index state and size.
func (x *Indexer) Status() Status {
	x.mu.Lock()
	st := Status{State: x.state, Notes: x.notes, Error: x.errMsg}
	x.mu.Unlock()
	if x.meaning != nil {
		ms := x.MeaningStatus()
		st.Meaning = &ms
	}
	return st
}

// StatusIn is Status with Notes counting only the notes of notebooks (a
// caller's notebook scope); 0 while no index can answer.
func (x *Indexer) StatusIn(ctx context.Context, notebooks []string) Status {
	st := x.Status()
	st.Notes = 0
	if ix := x.servableIndex(); ix != nil {
		if n, err := ix.CountIn(ctx, notebooks); err == nil {
			st.Notes = n
		}
	}
	return st
}

func (x *Indexer) markOpened() { x.openedOnce.Do(func() { close(x.opened) }) }

// waitOpened waits, at most max, for the first attempt to open the index:
// the first search after a start resumes from the saved index rather than
// falling back.
func (x *Indexer) waitOpened(ctx context.Context, max time.Duration) {
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-x.opened:
	case <-t.C:
	case <-ctx.Done():
	}
}

// servableIndex returns the index when it holds a complete build.
func (x *Indexer) servableIndex() *searchindex.Index {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.servable {
		return nil
	}
	return x.ix
}

func (x *Indexer) setState(s State, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.state = s
	x.errMsg = ""
	if err != nil {
		x.errMsg = err.Error()
	}
}

func (x *Indexer) signal(what string) {
	if x.cfg.Applied != nil {
		x.cfg.Applied(what)
	}
}

// run opens (or rebuilds) the index, then polls /events and reconciles
// until ctx ends. Failures are logged and retried on the next tick;
// nothing here panics or stops the process. A resumed index starts with
// the light check, not the full pass.
func (x *Indexer) run(ctx context.Context) {
	defer close(x.done)
	defer x.markOpened()
	ix := x.open(ctx)
	x.markOpened()
	if ix == nil {
		return
	}
	if x.meaning != nil {
		embedDone := make(chan struct{})
		defer func() { <-embedDone }()
		go func() {
			defer close(embedDone)
			x.embedLoop(ctx)
		}()
	}
	passes := &passes{full: time.Now()}
	buildFailures := 0
	syncs := &syncWatch{gen: x.cfg.SyncGeneration}
	syncs.resume(ctx, ix)
	var waiting []chan struct{}
	for {
		err := x.step(ctx, ix, passes, syncs)
		x.lastPoll.Store(time.Now().UnixNano())
		for _, w := range waiting {
			close(w)
		}
		waiting = waiting[:0]
		if err != nil && searchindex.IsCorrupt(err) {
			if ix = x.reopen(ctx, ix); ix == nil {
				return
			}
			continue
		}
		wait := pollWait(x.cfg.Poll, x.cfg.IdlePoll, int(x.idlePolls.Add(1))-1)
		if err != nil {
			x.trouble(ctx, err)
			var be *buildError
			if errors.As(err, &be) && !isJoplinDown(err) {
				// A build that fails for another reason than an outage
				// (too many notes, disk full) is costly to repeat.
				buildFailures++
				wait = min(30*x.cfg.Poll<<min(buildFailures-1, 5), 10*time.Minute)
			}
		} else {
			buildFailures = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-x.wake:
			t.Stop()
			// A search or a write: poll at the active interval from now.
			t = time.NewTimer(x.cfg.Poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			case w := <-x.catchUps:
				t.Stop()
				waiting = append(waiting, x.takeCatchUp(w))
			}
		case w := <-x.catchUps:
			t.Stop()
			waiting = append(waiting, x.takeCatchUp(w))
		}
	}
}

// passes holds when the light check and the full reconciliation last ran.
type passes struct{ light, full time.Time }

// buildError is a failed build.
type buildError struct{ err error }

func (e *buildError) Error() string { return "build: " + e.err.Error() }
func (e *buildError) Unwrap() error { return e.err }

// step builds the index when it has no cursor; otherwise it applies the
// changes /events reports, the tag links after a completed sync and, when
// due, a reconciliation pass.
func (x *Indexer) step(ctx context.Context, ix *searchindex.Index, p *passes, syncs *syncWatch) error {
	cursor, err := ix.Meta(ctx, "cursor")
	if err != nil {
		return err
	}
	// Read before the events, so that they cover every note the sync
	// applied by the time its tag links are read.
	synced := syncs.changed()
	if x.rebuild.Swap(false) {
		cursor = ""
	}
	if cursor == "" {
		if err := x.build(ctx, ix, syncs); err != nil {
			syncs.retry()
			return &buildError{err}
		}
		p.light, p.full = time.Now(), time.Now()
		return nil
	}
	if err := x.pollEvents(ctx, ix, cursor); err != nil {
		syncs.retry()
		return fmt.Errorf("apply changes: %w", err)
	}
	if synced {
		if err := x.refreshFoldersTags(ctx, ix, true); err != nil {
			syncs.retry()
			return fmt.Errorf("tag links after a sync: %w", err)
		}
		if err := syncs.save(ctx, ix); err != nil {
			return err
		}
		x.meaning.wake()
		x.signal("synced")
	}
	switch {
	case time.Since(p.full) >= x.cfg.FullReconcile:
		if err := x.reconcile(ctx, ix); err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		p.light, p.full = time.Now(), time.Now()
	case time.Since(p.light) >= x.cfg.Reconcile:
		if err := x.lightReconcile(ctx, ix); err != nil {
			return fmt.Errorf("check notebooks and tags: %w", err)
		}
		p.light = time.Now()
	}
	if st := x.Status().State; st != Ready {
		x.cfg.Log.Info("search index is up to date", "was", st)
		x.setState(Ready, nil)
	}
	return nil
}

// syncWatch notices a completed sync between two polls.
type syncWatch struct {
	gen  func() (int64, bool)
	last int64
	seen bool
}

// changed reports whether the sync generation moved since the last call
// (the first value seen counts as a change: a sync may have completed
// while the bridge was down).
func (w *syncWatch) changed() bool {
	if w.gen == nil {
		return false
	}
	g, ok := w.gen()
	if !ok || (w.seen && g == w.last) {
		return false
	}
	w.last, w.seen = g, true
	return true
}

// retry makes the next poll act on the generation again.
func (w *syncWatch) retry() { w.seen = false }

// resume takes the generation the index last caught up with, so a
// restart after no sync asks Joplin nothing for it.
func (w *syncWatch) resume(ctx context.Context, ix *searchindex.Index) {
	if w.gen == nil {
		return
	}
	if v, err := ix.Meta(ctx, "sync_gen"); err == nil && v != "" {
		if g, err := strconv.ParseInt(v, 10, 64); err == nil {
			w.last, w.seen = g, true
		}
	}
}

// save records the generation the index caught up with.
func (w *syncWatch) save(ctx context.Context, ix *searchindex.Index) error {
	if w.gen == nil || !w.seen {
		return nil
	}
	return ix.SetMeta(ctx, "sync_gen", strconv.FormatInt(w.last, 10))
}

// open opens the index file, moving a corrupt or outdated one aside.
func (x *Indexer) open(ctx context.Context) *searchindex.Index {
	for {
		err := os.MkdirAll(filepath.Dir(x.cfg.Path), 0o700)
		var ix *searchindex.Index
		start := time.Now()
		if err == nil {
			ix, err = searchindex.Open(ctx, x.cfg.Path)
		}
		if errors.Is(err, searchindex.ErrRebuild) {
			x.cfg.Log.Warn("search index is corrupt or of another format: rebuilding it", "reason", err, "kept_as", x.cfg.Path+".bad")
			err = nil
		}
		if err == nil {
			n, _ := ix.Count(ctx)
			c, _ := ix.Meta(ctx, "cursor")
			x.mu.Lock()
			x.ix, x.notes, x.servable = ix, n, c != ""
			x.mu.Unlock()
			if c != "" {
				x.setState(Ready, nil)
				x.cfg.Log.Info("search index resumed", "notes", n, "cursor", c, "took", time.Since(start).Round(time.Millisecond))
				x.signal("resumed")
			}
			return ix
		}
		if ctx.Err() != nil {
			return nil // the process is stopping: nothing failed
		}
		x.cfg.Log.Error("cannot open the search index; search uses Joplin's own meanwhile, retrying", "err", err)
		x.setState(Failed, err)
		x.markOpened()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * x.cfg.Poll):
		}
	}
}

// reopen closes a damaged index, moves it aside and opens a fresh one.
func (x *Indexer) reopen(ctx context.Context, ix *searchindex.Index) *searchindex.Index {
	x.cfg.Log.Warn("search index file is damaged: rebuilding it", "kept_as", x.cfg.Path+".bad")
	x.mu.Lock()
	x.ix, x.servable = nil, false
	x.mu.Unlock()
	ix.Close()
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(x.cfg.Path + suffix)
	}
	if err := os.Rename(x.cfg.Path, x.cfg.Path+".bad"); err != nil {
		x.cfg.Log.Error("cannot move the damaged search index aside", "err", err)
	}
	return x.open(ctx)
}

// trouble records an indexing failure, logged once per change of state:
// a Joplin outage pauses indexing, anything else (disk full, ...) fails;
// both are retried on the next tick. A built index keeps answering.
func (x *Indexer) trouble(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	state, msg := Failed, "search indexing failed; retrying"
	switch {
	case isJoplinDown(err):
		state, msg = Paused, "Joplin is unreachable: search indexing paused; retrying"
	case searchindex.IsDiskFull(err):
		msg = "disk full: the search index cannot be written; retrying"
	}
	changed := x.Status().State != state
	if changed {
		x.cfg.Log.Warn(msg, "err", err)
	}
	x.setState(state, err)
	if changed {
		x.signal(string(state))
	}
}

// File is the index file in stateDir for the Joplin at endpoint (a
// normalised base URL): one index per Joplin profile.
func File(stateDir, endpoint string) string {
	sum := sha256.Sum256([]byte(endpoint))
	return filepath.Join(stateDir, "search", "joplin-"+hex.EncodeToString(sum[:16])+".db")
}
