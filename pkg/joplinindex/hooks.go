package joplinindex

import (
	"context"
	"encoding/json"
	"time"

	"github.com/notebridge/notebridge/pkg/searchindex"
)

// Search answers q from the index. When the index cannot answer yet
// (not built, or the query uses a filter it does not hold), it returns
// ok false and the state to report; the caller then asks Joplin. A
// malformed query is an INVALID_ARGUMENT error.
func (x *Indexer) Search(ctx context.Context, query string, opts searchindex.Options) (hits []searchindex.Hit, state string, ok bool, err error) {
	x.Start()
	q, err := searchindex.Parse(query, time.Now())
	if _, unsupported := err.(*searchindex.ErrUnsupported); unsupported {
		return nil, "unsupported_query", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	x.waitOpened(ctx, time.Second)
	ix := x.servableIndex()
	if ix == nil {
		return nil, string(x.Status().State), false, nil
	}
	hits, err = ix.Search(ctx, q, opts)
	if err != nil {
		x.cfg.Log.Warn("search index query failed; answering from Joplin's search", "err", err)
		return nil, string(Failed), false, nil
	}
	return hits, string(Ready), true, nil
}

// The hooks below run after notebridge's own writes, before the tool
// answers, so that the next search sees the write. They take what the
// write already knows (a note write's answer, a tag's id and title, a link)
// and re-read from Joplin only what it does not tell (a note created or
// trashed, a notebook change, a tag made elsewhere). A failure is logged,
// never returned: the
// write itself succeeded, and /events or the reconciliation pass repairs
// the index later. Before the index is built they do nothing (the build
// or the saved cursor covers the write).

// NotesChanged re-reads notes (created, updated, moved, trashed,
// restored, tagged or untagged).
func (x *Indexer) NotesChanged(ctx context.Context, ids ...string) {
	if ix := x.hookIndex(); ix != nil {
		x.logHook("notes", x.refreshNotes(ctx, ix, ids))
	}
}

// NoteWritten indexes a note from a write's answer (Joplin answers a PUT
// with the whole note), keeping its tag links: no request to Joplin. An
// answer without the note's body is re-read instead.
func (x *Indexer) NoteWritten(ctx context.Context, answer []byte) {
	ix := x.hookIndex()
	if ix == nil {
		return
	}
	var n struct {
		apiNote
		Body *string `json:"body"`
	}
	if err := json.Unmarshal(answer, &n); err != nil || n.ID == "" || n.Body == nil || n.IsConflict != 0 {
		if n.ID != "" {
			x.logHook("notes", x.refreshNotes(ctx, ix, []string{n.ID}))
		}
		return
	}
	n.apiNote.Body = *n.Body
	x.logHook("notes", ix.PutNotes(ctx, []searchindex.Note{n.toIndex(nil)}))
}

// TagSaved indexes a tag created or renamed through notebridge.
func (x *Indexer) TagSaved(ctx context.Context, id, title string) {
	if ix := x.hookIndex(); ix != nil {
		x.logHook("tag", ix.PutTag(ctx, searchindex.Tag{ID: id, Title: title}))
	}
}

// TagDeleted removes a tag deleted through notebridge, and its links.
func (x *Indexer) TagDeleted(ctx context.Context, id string) {
	if ix := x.hookIndex(); ix != nil {
		x.logHook("tag", ix.DeleteTag(ctx, id))
	}
}

// TagLinked records a note tagged (linked) or untagged through notebridge.
// A tag the index does not hold yet (made elsewhere) is read first, with
// every other notebook and tag.
func (x *Indexer) TagLinked(ctx context.Context, noteID, tagID string, linked bool) {
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

// FoldersChanged re-reads notebooks and tags (a rename or move of a
// notebook, a tag's creation, rename or deletion) without the tag links.
func (x *Indexer) FoldersChanged(ctx context.Context) {
	if ix := x.hookIndex(); ix != nil {
		x.logHook("notebooks and tags", x.refreshFoldersTags(ctx, ix, false))
	}
}

// TreeChanged re-reads notebooks and compares every note's stamps: a
// notebook trashed or restored with the notes it holds.
func (x *Indexer) TreeChanged(ctx context.Context) {
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
