package joplinindex

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/joplin/vecsearch"
)

// pendingChunk is a chunk text to embed.
type pendingChunk struct {
	hash [16]byte
	text string
}

// embedChunks sends one round of chunks without a vector to the provider
// (Concurrency requests of Batch chunks), stores what came back and
// refreshes those notes in memory. It returns how many chunks it stored
// and the first failure.
func (x *Indexer) embedChunks(ctx context.Context, ix *searchindex.Index) (int, error) {
	m := x.meaning
	notes, hashes, err := ix.Unembedded(ctx, m.cfg.Batch*m.cfg.Concurrency)
	if err != nil {
		return 0, err
	}
	var todo []pendingChunk
	for _, n := range notes {
		for _, c := range vecsearch.Split(n.Title, n.Body) {
			if hashes[c.Hash] {
				delete(hashes, c.Hash)
				todo = append(todo, pendingChunk{c.Hash, c.Text})
			}
		}
	}
	var batches [][]pendingChunk
	for len(todo) > 0 {
		n := min(m.cfg.Batch, len(todo))
		batches, todo = append(batches, todo[:n]), todo[n:]
	}
	results := make([][]searchindex.Vector, len(batches))
	errs := make([]error, len(batches))
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Go(func() { results[i], errs[i] = x.embedBatch(ctx, ix, b) })
	}
	wg.Wait()
	var vecs []searchindex.Vector
	for _, r := range results {
		vecs = append(vecs, r...)
	}
	if len(vecs) > 0 {
		rids, err := ix.PutVectors(ctx, vecs)
		if err != nil {
			return 0, err
		}
		if st := x.meaningStore(); st != nil {
			if err := fillStore(ctx, ix, st, rids); err != nil {
				return 0, err
			}
		}
	}
	return len(vecs), errors.Join(errs...)
}

// embedBatch embeds one batch. A batch the provider refuses as too long
// is sent again chunk by chunk; a chunk refused alone is cut to half its
// length, twice, then recorded as refused (never sent again).
func (x *Indexer) embedBatch(ctx context.Context, ix *searchindex.Index, batch []pendingChunk) ([]searchindex.Vector, error) {
	out, err := x.embedTexts(ctx, ix, batch)
	if errors.Is(err, embed.ErrTooLarge) {
		return x.embedEach(ctx, ix, batch)
	}
	return out, err
}

// embedTexts sends the chunks of batch in one request and quantizes the
// vectors that come back.
func (x *Indexer) embedTexts(ctx context.Context, ix *searchindex.Index, batch []pendingChunk) ([]searchindex.Vector, error) {
	texts := make([]string, len(batch))
	for i, c := range batch {
		texts[i] = c.text
	}
	vecs, err := x.meaning.cfg.Provider.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if err := x.acceptDim(ctx, ix, len(vecs[0])); err != nil {
		return nil, err
	}
	out := make([]searchindex.Vector, len(batch))
	for i, v := range vecs {
		q, s := vecsearch.Quantize(v)
		out[i] = searchindex.Vector{Hash: batch[i].hash, Vec: q, Scale: s}
	}
	return out, nil
}

// embedEach embeds the chunks of a refused batch one at a time.
func (x *Indexer) embedEach(ctx context.Context, ix *searchindex.Index, batch []pendingChunk) ([]searchindex.Vector, error) {
	var out []searchindex.Vector
	for _, c := range batch {
		var err error
		for cuts := 0; ; cuts++ {
			var vs []searchindex.Vector
			vs, err = x.embedTexts(ctx, ix, []pendingChunk{c})
			if !errors.Is(err, embed.ErrTooLarge) {
				out = append(out, vs...)
				break
			}
			if cuts == 2 {
				x.cfg.Log.Warn("search by meaning: the provider refuses a chunk as too long even when cut; it is left out", "bytes", len(c.text))
				out = append(out, searchindex.Vector{Hash: c.hash})
				err = nil
				break
			}
			c.text = halve(c.text)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// halve cuts s to about half its length, at a rune boundary.
func halve(s string) string {
	n := len(s) / 2
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// acceptDim checks a vector length against the model's: the first answer
// for a model fixes it (stored, and the in-memory store made); another
// length later is errDimension.
func (x *Indexer) acceptDim(ctx context.Context, ix *searchindex.Index, dim int) error {
	m := x.meaning
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store != nil {
		if m.store.Dim() != dim {
			return fmt.Errorf("%w: model %s answered %d dimensions, earlier %d; set the model's usual dimensions or remove the search index to start over",
				errDimension, m.cfg.Provider.Model(), dim, m.store.Dim())
		}
		return nil
	}
	if err := ix.SetMeta(ctx, "embed_dim", strconv.Itoa(dim)); err != nil {
		return err
	}
	m.store = vecsearch.NewStore(dim)
	m.status.Dimension = dim
	return nil
}

// queryCache keeps the embeddings of recent queries (least recently used
// out first).
type queryCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cached, most recent first
	byKey map[string]*list.Element
}

type cached struct {
	key string
	vec []float32
}

func newQueryCache(max int) *queryCache {
	return &queryCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *queryCache) get(key string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).vec, true
}

func (c *queryCache) put(key string, vec []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		e.Value.(*cached).vec = vec
		c.order.MoveToFront(e)
		return
	}
	c.byKey[key] = c.order.PushFront(&cached{key, vec})
	if c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cached).key)
	}
}

func (c *queryCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.byKey)
}
