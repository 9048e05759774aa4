package joplinindex

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

// Search answers q from the index. When the index cannot answer yet
// (not built, or the query uses a filter it does not hold), it returns
// ok false and the state to report; the caller then asks Joplin. A
// malformed query is an INVALID_ARGUMENT error.
func (x *Indexer) Search(ctx context.Context, query string, opts searchindex.Options) (hits []searchindex.Hit, state string, ok bool, err error) {
	q, ix, state, err := x.searchable(ctx, query)
	if ix == nil || err != nil {
		return nil, state, false, err
	}
	hits, err = ix.Search(ctx, q, opts)
	if err != nil {
		x.cfg.Log.Warn("search index query failed; answering from Joplin's search", "err", err)
		return nil, string(Failed), false, nil
	}
	return hits, string(Ready), true, nil
}

// searchable is the opening of every search: it parses query, marks the
// index active (polling goes back to its active interval) and returns the
// index caught up with Joplin's changes made before the search. Without an
// index to answer from, ix is nil and state says why (unsupported_query,
// or the index's state).
func (x *Indexer) searchable(ctx context.Context, query string) (q searchindex.Query, ix *searchindex.Index, state string, err error) {
	x.Start()
	q, err = searchindex.Parse(query, time.Now())
	if _, unsupported := err.(*searchindex.ErrUnsupported); unsupported {
		return q, nil, "unsupported_query", nil
	}
	if err != nil {
		return q, nil, "", err
	}
	x.touch()
	x.waitOpened(ctx, time.Second)
	if ix = x.servableIndex(); ix == nil {
		return q, nil, string(x.Status().State), nil
	}
	x.catchUp(ctx)
	return q, ix, string(Ready), nil
}

// KnownTags returns the tags the index holds (as of its last poll or
// light check); ok is false when no built index can say.
func (x *Indexer) KnownTags(ctx context.Context) (tags []searchindex.Tag, ok bool) {
	ix := x.hookIndex()
	if ix == nil {
		return nil, false
	}
	tags, err := ix.Tags(ctx)
	if err != nil {
		x.cfg.Log.Warn("search index: tags not read", "err", err)
		return nil, false
	}
	return tags, true
}

// Wrote keeps the index fresh after a write notebridge made: New has the
// client tell it of every write Joplin accepted, which it handles before
// the write returns, so the next search sees it. It takes what the write
// already tells (a note write's answer, a tag's id and title, a link) and
// re-reads from Joplin only what it does not (a note trashed or restored
// without its body, a notebook change). A failure is logged, never
// returned: the write itself succeeded, and /events or the reconciliation
// pass repairs the index later. Before the index is built it does nothing
// (the build or the saved cursor covers the write).
func (x *Indexer) Wrote(ctx context.Context, w joplin.Write) {
	x.touch()
	defer x.meaning.wake() // a note's new text is embedded at once
	if x.deferred(w) {
		return
	}
	switch w.Kind {
	case joplin.NoteSaved:
		x.noteWritten(ctx, w.ID, w.Answer)
	case joplin.NoteTrashed:
		x.notesChanged(ctx, w.ID)
	case joplin.NotebookSaved:
		x.foldersChanged(ctx)
	case joplin.NotebookTrashed:
		x.treeChanged(ctx)
	case joplin.TagSaved:
		x.tagSaved(ctx, w.Answer)
	case joplin.TagDeleted:
		x.tagDeleted(ctx, w.ID)
	case joplin.TagLinked, joplin.TagUnlinked:
		x.tagLinked(ctx, w.NoteID, w.ID, w.Kind == joplin.TagLinked)
	case joplin.ResourceSaved:
		x.resourceSaved(ctx, w.ID)
	}
}

// deferred keeps w for after the build under way, if one is, and reports
// whether it did.
func (x *Indexer) deferred(w joplin.Write) bool {
	x.Start()
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.building {
		return false
	}
	if len(x.pending) < maxPending {
		w.Answer = bytes.Clone(w.Answer)
		x.pending = append(x.pending, w)
	} else {
		x.pendingLost = true
	}
	return true
}

// notesChanged re-reads notes.
func (x *Indexer) notesChanged(ctx context.Context, ids ...string) {
	if ix := x.hookIndex(); ix != nil {
		x.logHook("notes", x.refreshNotes(ctx, ix, ids))
	}
}

// noteWritten indexes note id from a write's answer (Joplin answers a
// POST or PUT with the note as saved), keeping its tag links: no request
// to Joplin. An answer without the note's body, or of a conflict copy, is
// re-read instead.
func (x *Indexer) noteWritten(ctx context.Context, id string, answer []byte) {
	ix := x.hookIndex()
	if ix == nil || id == "" {
		return
	}
	var n struct {
		joplin.Note
		Body *string `json:"body"`
	}
	if err := json.Unmarshal(answer, &n); err != nil || n.ID != id || n.Body == nil || n.IsConflict != 0 {
		x.logHook("notes", x.refreshNotes(ctx, ix, []string{id}))
		return
	}
	n.Note.Body = *n.Body
	in := toIndex(n.Note, nil)
	if err := attach(ctx, &in, x.fetchOCR); err != nil {
		x.logHook("notes", err)
		return
	}
	x.logHook("notes", ix.PutNotes(ctx, []searchindex.Note{in}))
}

// tagSaved indexes a tag created or renamed, from the write's answer; an
// answer without the tag's id and title has the tags read again.
func (x *Indexer) tagSaved(ctx context.Context, answer []byte) {
	ix := x.hookIndex()
	if ix == nil {
		return
	}
	var t idTitle
	if err := json.Unmarshal(answer, &t); err != nil || t.ID == "" || t.Title == "" {
		x.logHook("notebooks and tags", x.refreshFoldersTags(ctx, ix, false))
		return
	}
	x.logHook("tag", ix.PutTag(ctx, searchindex.Tag{ID: t.ID, Title: t.Title}))
}

// tagDeleted removes a deleted tag and its links.
func (x *Indexer) tagDeleted(ctx context.Context, id string) {
	if ix := x.hookIndex(); ix != nil {
		x.logHook("tag", ix.DeleteTag(ctx, id))
	}
}

// tagLinked records a note tagged (linked) or untagged. A tag the index
// does not hold yet (made elsewhere) is read first, with every other
// notebook and tag.
func (x *Indexer) tagLinked(ctx context.Context, noteID, tagID string, linked bool) {
	ix := x.hookIndex()
	if ix == nil {
		return
	}
	known, err := ix.HasTag(ctx, tagID)
	if err == nil && linked && !known {
		err = x.refreshFoldersTags(ctx, ix, false)
	}
	if err == nil {
		err = ix.LinkTag(ctx, noteID, tagID, linked)
	}
	x.logHook("tag link", err)
}

// foldersChanged re-reads notebooks and tags without the tag links.
func (x *Indexer) foldersChanged(ctx context.Context) {
	if ix := x.hookIndex(); ix != nil {
		x.logHook("notebooks and tags", x.refreshFoldersTags(ctx, ix, false))
	}
}

// treeChanged re-reads notebooks and compares every note's stamps: a
// notebook trashed with the notes it holds.
func (x *Indexer) treeChanged(ctx context.Context) {
	if ix := x.hookIndex(); ix != nil {
		err := x.refreshFoldersTags(ctx, ix, false)
		if err == nil {
			err = x.syncStamps(ctx, ix)
		}
		x.logHook("notebook tree", err)
	}
}

func (x *Indexer) hookIndex() *searchindex.Index {
	x.Start()
	return x.servableIndex()
}

func (x *Indexer) logHook(what string, err error) {
	if err != nil {
		x.cfg.Log.Warn("search index not updated after a write; the change feed or reconciliation pass will catch up", "what", what, "err", err)
	}
}
