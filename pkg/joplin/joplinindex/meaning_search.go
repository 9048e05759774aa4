package joplinindex

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
	"github.com/notebridge/notebridge/pkg/joplin/vecsearch"
)

// Search modes.
const (
	ModeKeyword  = "keyword"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// What a search by meaning reports of its semantic leg (Result.Semantic).
const (
	SemanticReady       = "ready"       // every note embedded; the leg answered
	SemanticPartial     = "partial"     // the leg answered; some notes are still being embedded
	SemanticOff         = "off"         // no provider configured: keywords answered
	SemanticPending     = "pending"     // nothing embedded yet: keywords answered
	SemanticUnavailable = "unavailable" // the provider failed or was too slow: keywords answered
	SemanticFailed      = "failed"      // the provider changed dimension: keywords answered
)

// SemanticStates lists the values of Result.Semantic.
var SemanticStates = []string{SemanticReady, SemanticPartial, SemanticOff, SemanticPending, SemanticUnavailable, SemanticFailed}

// MeaningResult is the answer of SearchByMeaning.
type MeaningResult struct {
	Hits []searchindex.Hit
	// State and OK as Search returns them: OK false, Joplin must answer.
	State string
	OK    bool
	// Mode is the mode that answered: keyword when the semantic leg could
	// not (Semantic says why) or the query has no words, only filters.
	Mode     string
	Semantic string
}

// fusionDepth is how many hits of each leg a hybrid search fuses, at least.
const fusionDepth = 50

// SearchByMeaning answers q in mode keyword (as Search), semantic
// (nearest chunks by cosine similarity, every note ranked) or hybrid (reciprocal rank fusion of the BM25 and the
// semantic rankings), with the query's filters applied in both legs. It
// waits at most MeaningConfig.QueryWait for the query's embedding; when
// the semantic leg cannot answer, the keywords do and Semantic says why.
func (x *Indexer) SearchByMeaning(ctx context.Context, query string, opts searchindex.Options, mode string) (MeaningResult, error) {
	q, ix, state, err := x.searchable(ctx, query)
	if ix == nil || err != nil {
		return MeaningResult{State: state}, err
	}
	res := MeaningResult{State: string(Ready), OK: true, Mode: ModeKeyword}
	if mode == ModeKeyword {
		return x.keywordLeg(ctx, ix, q, opts, res)
	}
	vec, st, sem := x.queryVector(ctx, q.MeaningText())
	res.Semantic = sem
	if vec == nil {
		return x.keywordLeg(ctx, ix, q, opts, res)
	}
	res.Mode = mode
	keep, err := ix.Scope(ctx, q, opts)
	if err != nil {
		return x.indexFailed(err)
	}
	want := opts.Offset + opts.Limit + 1
	if mode == ModeSemantic {
		matches := st.Search(vec, want, keep)
		res.Hits, err = ix.ChunkHits(ctx, refs(matches[min(opts.Offset, len(matches)):]))
		if err != nil {
			return x.indexFailed(err)
		}
		return res, nil
	}
	// The two legs run at once: the scan of the vectors on this goroutine
	// while SQLite ranks the words on another.
	depth := max(want, fusionDepth)
	type keywordAnswer struct {
		hits []searchindex.Hit
		err  error
	}
	kwDone := make(chan keywordAnswer, 1)
	go func() {
		hits, err := ix.Search(ctx, q, searchindex.Options{Limit: depth - 1, IncludeTrashed: opts.IncludeTrashed, NoSnippets: true,
			OnlyNotebooks: opts.OnlyNotebooks, Notebooks: opts.Notebooks})
		kwDone <- keywordAnswer{hits, err}
	}()
	matches := st.Search(vec, depth, keep)
	kwa := <-kwDone
	kw, err := kwa.hits, kwa.err
	if err != nil {
		return x.indexFailed(err)
	}
	res.Hits, err = fuse(ctx, ix, q, kw, matches, opts)
	if err != nil {
		return x.indexFailed(err)
	}
	return res, nil
}

// keywordLeg answers by keywords alone (BM25), as Search does.
func (x *Indexer) keywordLeg(ctx context.Context, ix *searchindex.Index, q searchindex.Query, opts searchindex.Options, res MeaningResult) (MeaningResult, error) {
	hits, err := ix.Search(ctx, q, opts)
	if err != nil {
		return x.indexFailed(err)
	}
	res.Hits = hits
	return res, nil
}

func (x *Indexer) indexFailed(err error) (MeaningResult, error) {
	x.cfg.Log.Warn("search index query failed; answering from Joplin's search", "err", err)
	return MeaningResult{State: string(Failed)}, nil
}

// fuse ranks the keyword hits and the semantic matches by reciprocal rank
// fusion and returns the page opts asks for (plus one when there is
// more). A note found by its words keeps its highlighted snippet; one
// found only by meaning shows its best chunk.
func fuse(ctx context.Context, ix *searchindex.Index, q searchindex.Query, kw []searchindex.Hit, sem []vecsearch.Match, opts searchindex.Options) ([]searchindex.Hit, error) {
	kwKeys := make([]string, len(kw))
	byKey := map[string]searchindex.Hit{}
	for i, h := range kw {
		kwKeys[i] = strconv.FormatInt(h.RID, 10)
		byKey[kwKeys[i]] = h
	}
	semKeys := make([]string, len(sem))
	bestChunk := map[string]int{}
	for i, m := range sem {
		semKeys[i] = strconv.FormatInt(m.Note, 10)
		bestChunk[semKeys[i]] = m.Seq
	}
	fused := vecsearch.Fuse(kwKeys, semKeys)
	fused = fused[min(opts.Offset, len(fused)):]
	fused = fused[:min(opts.Limit+1, len(fused))]
	var shown []int64
	for _, key := range fused {
		if h, ok := byKey[key]; ok {
			shown = append(shown, h.RID)
		}
	}
	snippets, err := ix.Snippets(ctx, q, shown)
	if err != nil {
		return nil, err
	}
	var chunks []searchindex.ChunkRef
	for _, key := range fused {
		if h, ok := byKey[key]; !ok || snippets[h.RID].Snippet == "" {
			rid, _ := strconv.ParseInt(key, 10, 64)
			chunks = append(chunks, searchindex.ChunkRef{RID: rid, Seq: bestChunk[key]})
		}
	}
	chunkHits, err := ix.ChunkHits(ctx, chunks)
	if err != nil {
		return nil, err
	}
	byChunk := map[int64]searchindex.Hit{}
	for _, h := range chunkHits {
		byChunk[h.RID] = h
	}
	out := make([]searchindex.Hit, 0, len(fused))
	for _, key := range fused {
		if h, ok := byKey[key]; ok && snippets[h.RID].Snippet != "" {
			s := snippets[h.RID]
			h.Snippet, h.Attachment, h.AttachmentSnippet = s.Snippet, s.Attachment, s.AttachmentSnippet
			out = append(out, h)
			continue
		}
		rid, _ := strconv.ParseInt(key, 10, 64)
		if h, ok := byChunk[rid]; ok {
			out = append(out, h)
		}
	}
	return out, nil
}

func refs(ms []vecsearch.Match) []searchindex.ChunkRef {
	out := make([]searchindex.ChunkRef, len(ms))
	for i, m := range ms {
		out[i] = searchindex.ChunkRef{RID: m.Note, Seq: m.Seq}
	}
	return out
}

// queryVector embeds the query text (cached), waiting at most QueryWait.
// It returns the vector and the store to search, or nil and why not.
func (x *Indexer) queryVector(ctx context.Context, text string) ([]float32, *vecsearch.Store, string) {
	m := x.meaning
	if m == nil {
		return nil, nil, SemanticOff
	}
	m.mu.Lock()
	st, state, ready, downTill := m.store, m.status.State, m.ready, m.downTill
	m.mu.Unlock()
	sem := SemanticPartial
	if ready {
		sem = SemanticReady
	}
	switch {
	case state == MeaningFailed:
		return nil, nil, SemanticFailed
	case st == nil || st.Len() == 0:
		return nil, nil, SemanticPending
	case text == "":
		return nil, nil, sem
	}
	if v, ok := m.cache.get(text); ok {
		return v, st, sem
	}
	if time.Now().Before(downTill) {
		return nil, nil, SemanticUnavailable
	}
	qctx, cancel := context.WithTimeout(ctx, m.cfg.QueryWait)
	defer cancel()
	vec, err := m.cfg.Provider.EmbedQuery(qctx, text)
	if err != nil {
		if ctx.Err() == nil {
			x.cfg.Log.Warn("search by meaning: the query could not be embedded; keyword search answers", "err", err)
			m.mu.Lock()
			m.downTill = time.Now().Add(10 * time.Second)
			m.mu.Unlock()
		}
		return nil, nil, SemanticUnavailable
	}
	if len(vec) != st.Dim() {
		err := fmt.Errorf("%w: model %s answered %d dimensions for a query, the stored vectors have %d", errDimension, m.cfg.Provider.Model(), len(vec), st.Dim())
		x.meaningTrouble(err, 1)
		return nil, nil, SemanticFailed
	}
	m.cache.put(text, vec)
	return vec, st, sem
}
