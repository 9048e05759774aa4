package joplinindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/joplin/vecsearch"
)

// Embedder turns texts into vectors: an embedding provider (pkg/embed).
// Embed embeds documents (chunks of notes), EmbedQuery a search query;
// each puts its prefix (Prefixes) before the text.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Model() string
	Prefixes() embed.Prefixes
}

// MeaningConfig turns search by meaning on: chunks of every note are
// embedded in the background and stored beside the full-text index.
type MeaningConfig struct {
	// Provider embeds texts; nil leaves search by meaning off.
	Provider Embedder
	// Batch is the number of chunks per provider request (default 32).
	Batch int
	// Concurrency is the number of requests in flight (default 2).
	Concurrency int
	// QueryWait bounds how long a search waits for the query's embedding
	// (default 2 s); past it the search answers by keywords.
	QueryWait time.Duration
	// Backoff is the first wait after a failed request, doubled up to
	// MaxBackoff (defaults 1 s and 5 min).
	Backoff, MaxBackoff time.Duration
}

// Meaning states.
const (
	MeaningOff       = "off"       // no provider configured
	MeaningStarting  = "starting"  // waiting for the full-text index
	MeaningEmbedding = "embedding" // chunks are being embedded
	MeaningReady     = "ready"     // every chunk embedded
	MeaningPaused    = "paused"    // the provider failed: retrying with backoff
	MeaningFailed    = "failed"    // the provider changed dimension: needs the operator
)

// MeaningStatus is what joplin_status reports of search by meaning.
type MeaningStatus struct {
	State string `json:"state" schema:"enum=off|starting|embedding|ready|paused|failed"`
	Model string `json:"model,omitempty" schema:"max=200"`
	// QueryPrefix and DocumentPrefix are put before each query and each
	// chunk sent to the model (the model's known prefixes, or the
	// operator's --embeddings-query-prefix/--embeddings-document-prefix).
	QueryPrefix    string `json:"query_prefix" schema:"max=1000"`
	DocumentPrefix string `json:"document_prefix" schema:"max=1000"`
	Dimension      int    `json:"dimension,omitempty" schema:"min=0,max=1000000"`
	// Chunks with text; Done embedded; Pending to embed (notes not yet
	// chunked not counted: NotesPending); Refused by the provider (too
	// long even when cut).
	Chunks       int `json:"chunks" schema:"min=0,max=2147483648"`
	Done         int `json:"done" schema:"min=0,max=2147483648"`
	Pending      int `json:"pending" schema:"min=0,max=2147483648"`
	NotesPending int `json:"notes_pending" schema:"min=0,max=2147483648"`
	Refused      int `json:"refused" schema:"min=0,max=2147483648"`
	// FailedRequests counts provider requests that failed since start.
	FailedRequests int    `json:"failed_requests" schema:"min=0,max=2147483648"`
	Error          string `json:"error,omitempty" schema:"max=2000"`
	// NextTry, while paused or failed, is when the embedder asks the
	// provider again (RFC 3339, UTC): after a change of dimension, the
	// longest backoff (5 minutes by default).
	NextTry string `json:"next_try,omitempty" schema:"max=40"`
	// Repaired says when and why the stored vectors were found damaged
	// and embedded again (a copy of the damaged index kept beside it).
	Repaired string `json:"repaired,omitempty" schema:"max=500"`
}

// meaning is the state of search by meaning.
type meaning struct {
	cfg  MeaningConfig
	kick chan struct{}

	mu       sync.Mutex
	store    *vecsearch.Store // nil until the dimension is known
	status   MeaningStatus
	ready    bool      // embedded everything once: hybrid is the default
	downTill time.Time // provider failed: searches skip it until then
	// dimErr is the provider's change of dimension: shown until vectors of
	// the stored dimension come back.
	dimErr error
	// pruned is when unused vectors were last removed (embedLoop only).
	pruned time.Time
	cache  *queryCache
}

func newMeaning(cfg MeaningConfig) *meaning {
	if cfg.Provider == nil {
		return nil
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 32
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 2
	}
	if cfg.QueryWait <= 0 {
		cfg.QueryWait = 2 * time.Second
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Minute
	}
	return &meaning{cfg: cfg, kick: make(chan struct{}, 1), cache: newQueryCache(256),
		status: MeaningStatus{State: MeaningStarting, Model: cfg.Provider.Model(),
			QueryPrefix: cfg.Provider.Prefixes().Query, DocumentPrefix: cfg.Provider.Prefixes().Document}}
}

// forget drops the vectors held in memory (the index is rebuilt: its
// notes get new row ids); they are loaded again from the index.
func (m *meaning) forget() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store, m.ready = nil, false
}

// wake makes the loop look for work now.
func (m *meaning) wake() {
	if m == nil {
		return
	}
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// MeaningStatus reports search by meaning (State off when not configured).
func (x *Indexer) MeaningStatus() MeaningStatus {
	m := x.meaning
	if m == nil {
		return MeaningStatus{State: MeaningOff}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// MeaningReady reports whether every note was embedded once with the
// configured model: hybrid search is then the default.
func (x *Indexer) MeaningReady() bool {
	m := x.meaning
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ready && m.status.State != MeaningFailed
}

// errDimension: the provider answered vectors of another length for the
// same model.
var errDimension = errors.New("the embedding provider changed the vector length for the same model")

// embedLoop embeds the chunks of the built index until ctx ends: on a
// kick (a write, changes applied from Joplin, a build), every minute
// (a safety net; each round scans the chunk tables), and at once while
// work remains; after a failure it backs off.
func (x *Indexer) embedLoop(ctx context.Context) {
	m := x.meaning
	failures := 0
	for {
		wait, kick := max(60*x.cfg.Poll, time.Minute), m.kick
		if ix := x.servableIndex(); ix != nil {
			more, err := x.embedStep(ctx, ix)
			switch {
			case ctx.Err() != nil:
				return
			case searchindex.IsCorrupt(err):
				x.vectorsDamaged(ctx, ix, err)
				wait = 0
			case err != nil:
				failures++
				wait, kick = x.meaningTrouble(err, failures), nil // writes do not cut the backoff short
			case more:
				failures = 0
				wait = 0
			default:
				failures = 0
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// meaningTrouble records a failed step and returns the wait before the
// next: exponential backoff, at least what a rate limit asks.
func (x *Indexer) meaningTrouble(err error, failures int) time.Duration {
	m := x.meaning
	wait := min(m.cfg.Backoff<<min(failures-1, 20), m.cfg.MaxBackoff)
	var rl *embed.RateLimited
	if errors.As(err, &rl) {
		wait = max(wait, rl.RetryAfter)
	}
	state := MeaningPaused
	m.mu.Lock()
	if errors.Is(err, errDimension) {
		state, wait, m.dimErr = MeaningFailed, m.cfg.MaxBackoff, err
	}
	changed := m.status.State != state
	m.status.State, m.status.Error = state, err.Error()
	m.status.NextTry = time.Now().Add(wait).UTC().Format(time.RFC3339)
	m.status.FailedRequests++
	m.downTill = time.Now().Add(min(wait, 10*time.Second))
	m.mu.Unlock()
	if changed {
		x.cfg.Log.Warn("search by meaning: the embedding provider failed; keyword search answers meanwhile", "err", err, "retry_in", wait)
		x.signal("meaning " + state)
	}
	return wait
}

// vectorsDamaged handles stored vectors that cannot be read back (a row
// of the wrong type or size) as the index handles a damaged file, without
// blaming the provider: a copy of the index is kept beside it (.bad), the
// vectors are cleared and every chunk embedded again, and joplin_status
// says so (index.meaning.repaired).
func (x *Indexer) vectorsDamaged(ctx context.Context, ix *searchindex.Index, cause error) {
	kept := ix.Path() + ".bad"
	x.cfg.Log.Warn("search by meaning: the stored vectors are damaged; embedding every note again", "err", cause, "kept_as", kept)
	os.Remove(kept) // the copy of an earlier damage
	if err := ix.CopyTo(ctx, kept); err != nil {
		x.cfg.Log.Error("search by meaning: cannot keep a copy of the damaged index", "err", err)
	}
	if err := ix.ClearVectors(ctx); err != nil {
		x.meaningTrouble(err, 1)
		return
	}
	m := x.meaning
	m.mu.Lock()
	m.store, m.ready = nil, false
	m.status.State, m.status.Error = MeaningEmbedding, ""
	m.status.Repaired = time.Now().UTC().Format(time.RFC3339) +
		": stored vectors were damaged (a value of the wrong type or size); a copy of the index is kept beside it as .bad and every note is embedded again"
	m.mu.Unlock()
	m.cache.clear()
	x.signal("meaning repaired")
}

// embedStep does one round: the model check, chunking of changed notes,
// one round of provider requests. more says work remains.
func (x *Indexer) embedStep(ctx context.Context, ix *searchindex.Index) (more bool, err error) {
	if err := x.checkModel(ctx, ix); err != nil {
		return false, err
	}
	chunked, err := x.chunkNotes(ctx, ix)
	if err != nil {
		return false, err
	}
	embedded, err := x.embedChunks(ctx, ix)
	if err != nil {
		return false, err
	}
	counts, err := ix.CountVectors(ctx)
	if err != nil {
		return false, err
	}
	unchunked, err := ix.UnchunkedCount(ctx)
	if err != nil {
		return false, err
	}
	m := x.meaning
	m.mu.Lock()
	m.status.Chunks, m.status.Done, m.status.Pending, m.status.Refused = counts.Chunks, counts.Done, counts.Pending, counts.Failed
	m.status.NotesPending, m.status.Error, m.status.NextTry = unchunked, "", ""
	idle := counts.Pending == 0 && unchunked == 0
	was := m.status.State
	if embedded > 0 { // the provider answered
		m.dimErr, m.downTill = nil, time.Time{}
	}
	failed := m.dimErr != nil
	switch {
	case failed:
		m.status.State, m.status.Error = MeaningFailed, m.dimErr.Error()
	case idle:
		m.status.State, m.ready = MeaningReady, true
	default:
		m.status.State = MeaningEmbedding
	}
	m.mu.Unlock()
	if chunked+embedded > 0 {
		x.signal("embedded")
	}
	if idle && !failed && (was != MeaningReady || time.Since(m.pruned) >= time.Hour) {
		// The vectors of chunks edited away go when all is embedded, and
		// at most hourly after that.
		if err := ix.PruneVectors(ctx); err != nil {
			return false, err
		}
		x.pruneStore(ctx, ix)
		m.pruned = time.Now()
	}
	if idle && was != MeaningReady && !failed {
		x.cfg.Log.Info("search by meaning is ready", "chunks", counts.Done, "refused", counts.Failed)
		x.signal("meaning ready")
	}
	return !idle && chunked+embedded > 0, nil
}

// checkModel clears the vectors when the configured model, or the prefix
// put before documents, differs from what made them, and loads the stored
// vectors into memory once. (A query prefix changes no stored vector: a
// new one holds from the next query on.)
func (x *Indexer) checkModel(ctx context.Context, ix *searchindex.Index) error {
	m := x.meaning
	model, prefix := m.cfg.Provider.Model(), m.cfg.Provider.Prefixes().Document
	stored, err := ix.Meta(ctx, "embed_model")
	if err != nil {
		return err
	}
	storedPrefix, err := ix.Meta(ctx, "embed_document_prefix")
	if err != nil {
		return err
	}
	if stored != model || storedPrefix != prefix {
		switch {
		case stored != "" && stored != model:
			x.cfg.Log.Info("search by meaning: the embedding model changed; re-embedding every note in the background", "was", stored, "now", model)
		case stored != "":
			x.cfg.Log.Info("search by meaning: the document prefix changed; re-embedding every note in the background", "was", storedPrefix, "now", prefix)
		}
		if err := ix.ClearVectors(ctx); err != nil {
			return err
		}
		if err := ix.SetMeta(ctx, "embed_dim", ""); err != nil {
			return err
		}
		if err := ix.SetMeta(ctx, "embed_model", model); err != nil {
			return err
		}
		if err := ix.SetMeta(ctx, "embed_document_prefix", prefix); err != nil {
			return err
		}
		m.mu.Lock()
		m.store, m.ready = nil, false
		m.mu.Unlock()
		m.cache.clear()
	}
	if x.meaningStore() != nil {
		return nil
	}
	d, err := ix.Meta(ctx, "embed_dim")
	if err != nil || d == "" {
		return err
	}
	dim, err := strconv.Atoi(d)
	if err != nil || dim <= 0 {
		return fmt.Errorf("stored embedding dimension %q is not a positive number", d)
	}
	return x.loadStore(ctx, ix, dim)
}

// loadStore reads every stored vector into a new in-memory store.
func (x *Indexer) loadStore(ctx context.Context, ix *searchindex.Index, dim int) error {
	start := time.Now()
	st := vecsearch.NewStore(dim)
	if err := fillStore(ctx, ix, st, nil); err != nil {
		return err
	}
	m := x.meaning
	m.mu.Lock()
	m.store = st
	m.status.Dimension = dim
	m.mu.Unlock()
	x.cfg.Log.Info("search by meaning: vectors loaded", "chunks", st.Len(), "dimension", dim, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// fillStore sets, in st, the embedded chunks of the notes given (nil: all).
// A vector of another length than st's is a damaged row.
func fillStore(ctx context.Context, ix *searchindex.Index, st *vecsearch.Store, rids []int64) error {
	byNote := map[int64][]vecsearch.Entry{}
	bad := 0
	err := ix.NoteVectors(ctx, rids, func(rid int64, seq int, vec []int8, scale float32) {
		if len(vec) != st.Dim() {
			bad++
			return
		}
		byNote[rid] = append(byNote[rid], vecsearch.Entry{Seq: seq, Vec: vec, Scale: scale})
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("read embeddings: %d vectors of another length than %d: %w", bad, st.Dim(), searchindex.ErrBadRow)
	}
	for _, rid := range rids {
		if _, ok := byNote[rid]; !ok {
			st.SetNote(rid, nil)
		}
	}
	for rid, es := range byNote {
		st.SetNote(rid, es)
	}
	return nil
}

// pruneStore drops from memory the notes no longer in the index.
func (x *Indexer) pruneStore(ctx context.Context, ix *searchindex.Index) {
	st := x.meaningStore()
	if st == nil {
		return
	}
	live, err := ix.NoteRIDs(ctx)
	if err != nil {
		return
	}
	for _, rid := range st.Notes() {
		if !live[rid] {
			st.SetNote(rid, nil)
		}
	}
}

func (x *Indexer) meaningStore() *vecsearch.Store {
	m := x.meaning
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.store
}

// chunkNotes splits up to 500 changed notes into chunks and refreshes
// their vectors in memory (a changed note keeps the vectors of the chunks
// whose text it kept).
func (x *Indexer) chunkNotes(ctx context.Context, ix *searchindex.Index) (int, error) {
	notes, err := ix.Unchunked(ctx, 500)
	if err != nil {
		return 0, err
	}
	var done []int64
	for _, n := range notes {
		chunks := vecsearch.Split(n.Title, n.Body)
		rows := make([]searchindex.ChunkRow, len(chunks))
		for i, c := range chunks {
			rows[i] = searchindex.ChunkRow{Seq: i, Hash: c.Hash, Start: c.Start, End: c.End}
		}
		ok, err := ix.PutChunks(ctx, n, rows)
		if err != nil {
			return 0, err
		}
		if ok {
			done = append(done, n.RID)
		}
	}
	if st := x.meaningStore(); st != nil && len(done) > 0 {
		if err := fillStore(ctx, ix, st, done); err != nil {
			return 0, err
		}
	}
	return len(notes), nil
}
