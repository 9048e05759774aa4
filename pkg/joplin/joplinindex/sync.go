package joplinindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

const noteFields = "id,parent_id,title,body,is_todo,todo_due,todo_completed,user_created_time,user_updated_time,deleted_time,is_conflict"

// toIndex is n as the index holds it.
func toIndex(n joplin.Note, tags []string) searchindex.Note {
	return searchindex.Note{
		ID: n.ID, ParentID: n.ParentID, Title: n.Title, Body: n.Body, IsTodo: n.IsTodo != 0,
		TodoDue: n.TodoDue, TodoCompleted: n.TodoCompleted, CreatedTime: n.UserCreatedTime,
		UpdatedTime: n.UserUpdatedTime, Deleted: n.DeletedTime, TagIDs: tags,
	}
}

type idTitle struct {
	ID       string `json:"id"`
	ParentID string `json:"parent_id"`
	Title    string `json:"title"`
}

// cursor is an /events cursor: Joplin 3.5 sends a string, older versions
// a number.
type cursor string

func (c *cursor) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = cursor(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("events cursor %s: %w", b, err)
	}
	*c = cursor(n.String())
	return nil
}

func isJoplinDown(err error) bool {
	de, ok := domainerr.As(err)
	return ok && de.Code == domainerr.JoplinUnavailable
}

// build reads every notebook, tag, tag link and note from Joplin into an
// emptied index, page by page, then saves the cursor taken before the
// first read: changes made during the build are applied after it. It
// keeps the sync generation syncs saw: the build read the tag links.
func (x *Indexer) build(ctx context.Context, ix *searchindex.Index, syncs *syncWatch) error {
	x.setState(Building, nil)
	x.mu.Lock()
	x.servable = false
	x.building = true
	x.mu.Unlock()
	defer func() { // a failed build drops what waited: the next one reads it
		x.mu.Lock()
		x.building, x.pending, x.pendingLost = false, nil, false
		x.mu.Unlock()
	}()
	start := time.Now()
	x.cfg.Log.Info("search index build started; search uses Joplin's own until it is done")
	var head struct {
		Cursor cursor `json:"cursor"`
	}
	if err := x.c.Get(ctx, "/events", nil, &head); err != nil {
		return err
	}
	if err := ix.Reset(ctx); err != nil {
		return err
	}
	fps, err := x.fingerprints(ctx)
	if err != nil {
		return err
	}
	if err := x.refreshFoldersTags(ctx, ix, true); err != nil {
		return err
	}
	lookup, err := x.allOCR(ctx)
	if err != nil {
		return err
	}
	n := 0
	q := url.Values{"fields": {noteFields}, "include_deleted": {"1"}, "order_by": {"created_time"}, "order_dir": {"ASC"}}
	err = joplin.EachPage(ctx, x.c, "/notes", q, func(page int, notes []joplin.Note) error {
		batch := make([]searchindex.Note, len(notes))
		for i, it := range notes {
			batch[i] = toIndex(it, nil)
			if err := attach(ctx, &batch[i], lookup); err != nil {
				return err
			}
		}
		if err := ix.PutNotes(ctx, batch); err != nil {
			return err
		}
		n += len(notes)
		x.mu.Lock()
		x.notes = n
		x.mu.Unlock()
		if page%20 == 0 {
			x.cfg.Log.Info("search index build progress", "notes", n)
		}
		if n > x.cfg.MaxNotes {
			return domainerr.New(domainerr.JoplinError, "Joplin holds more than %d notes; the search index stops there", x.cfg.MaxNotes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := x.setFingerprints(ctx, ix, fps); err != nil {
		return err
	}
	if err := syncs.save(ctx, ix); err != nil {
		return err
	}
	if err := ix.SetMeta(ctx, "cursor", string(head.Cursor)); err != nil {
		return err
	}
	if err := ix.Optimize(ctx); err != nil {
		return err
	}
	x.mu.Lock()
	x.servable, x.building = true, false
	pending, lost := x.pending, x.pendingLost
	x.pending, x.pendingLost = nil, false
	x.mu.Unlock()
	// The writes made during the build, in their order: the build may
	// have read each object before it.
	for _, w := range pending {
		x.Wrote(ctx, w)
	}
	if lost {
		if err := x.reconcile(ctx, ix); err != nil {
			return err
		}
	}
	x.setState(Ready, nil)
	x.cfg.Log.Info("search index built", "notes", n, "took", time.Since(start).Round(time.Millisecond))
	x.meaning.wake() // new or changed notes to embed
	// The build is as fresh as a poll: a search right after it needs no
	// catch-up. Stored before the signal, so that a search the signal
	// lets run does not find the previous poll's time.
	x.lastPoll.Store(time.Now().UnixNano())
	x.signal("built")
	return nil
}

// refreshFoldersTags re-reads every notebook and tag and, with links,
// every tag's notes (one listing per tag).
func (x *Indexer) refreshFoldersTags(ctx context.Context, ix *searchindex.Index, links bool) error {
	if err := x.refreshFolders(ctx, ix); err != nil {
		return err
	}
	return x.refreshTags(ctx, ix, links)
}

// refreshTags re-reads every tag and, with links, every tag's notes; then
// it keeps the tags' stamps for the light check (tagstamps.go).
func (x *Indexer) refreshTags(ctx context.Context, ix *searchindex.Index, links bool) error {
	tags, err := joplin.ListAll[tagRow](ctx, x.c, "/tags", url.Values{"fields": {tagFields}}, x.cfg.MaxNotes)
	if err != nil {
		return err
	}
	ts := make([]searchindex.Tag, len(tags))
	var linkMap map[string][]string
	if links {
		linkMap = map[string][]string{}
	}
	stamps := make(map[string]int64, len(tags))
	for i, t := range tags {
		ts[i] = searchindex.Tag{ID: t.ID, Title: t.Title}
		stamps[t.ID] = t.UpdatedTime
		if !links {
			continue
		}
		notes, err := x.tagNotes(ctx, t.ID)
		if err != nil {
			return err
		}
		for _, n := range notes {
			linkMap[n] = append(linkMap[n], t.ID)
		}
	}
	if err := ix.ReplaceTags(ctx, ts, linkMap); err != nil {
		return err
	}
	if !links {
		return nil
	}
	return saveTagStamps(ctx, ix, stamps)
}

// tagNotes lists the ids of the notes tag id is on.
func (x *Indexer) tagNotes(ctx context.Context, id string) ([]string, error) {
	notes, err := joplin.ListAll[idTitle](ctx, x.c, "/tags/"+id+"/notes", url.Values{"fields": {"id"}}, x.cfg.MaxNotes)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(notes))
	for i, n := range notes {
		ids[i] = n.ID
	}
	return ids, nil
}

// refreshFolders re-reads every notebook.
func (x *Indexer) refreshFolders(ctx context.Context, ix *searchindex.Index) error {
	folders, err := joplin.ListAll[idTitle](ctx, x.c, "/folders", url.Values{"fields": {"id,parent_id,title"}}, x.cfg.MaxNotes)
	if err != nil {
		return err
	}
	fs := make([]searchindex.Folder, len(folders))
	for i, f := range folders {
		fs[i] = searchindex.Folder{ID: f.ID, ParentID: f.ParentID, Title: f.Title}
	}
	return ix.ReplaceFolders(ctx, fs)
}

// pollEvents applies every change /events reports after cursor, a page
// of up to 100 at a time, saving the cursor after each page.
func (x *Indexer) pollEvents(ctx context.Context, ix *searchindex.Index, from string) error {
	for {
		var p struct {
			Items []struct {
				ItemType int    `json:"item_type"`
				ItemID   string `json:"item_id"`
				Type     int    `json:"type"`
			} `json:"items"`
			HasMore bool   `json:"has_more"`
			Cursor  cursor `json:"cursor"`
		}
		if err := x.c.Get(ctx, "/events", url.Values{"cursor": {from}}, &p); err != nil {
			return err
		}
		if len(p.Items) == 0 {
			return nil
		}
		seen := map[string]bool{}
		var ids []string
		for _, it := range p.Items {
			if it.ItemType == 1 && !seen[it.ItemID] {
				seen[it.ItemID] = true
				ids = append(ids, it.ItemID)
			}
		}
		if err := x.refreshNotes(ctx, ix, ids); err != nil {
			return err
		}
		if err := ix.SetMeta(ctx, "cursor", string(p.Cursor)); err != nil {
			return err
		}
		x.meaning.wake() // new or changed notes to embed
		x.signal("events")
		if !p.HasMore || string(p.Cursor) == from {
			return nil
		}
		from = string(p.Cursor)
	}
}

// refreshNotes re-reads notes and their tags from Joplin into the index;
// a note Joplin no longer has is removed. A note whose stamp is the one the
// index holds (the change was notebridge's own write, indexed from its
// answer) keeps its indexed tags: its tag links were indexed as they were
// written, and a link never moves a note's stamp nor shows in /events, so
// re-reading them would cost a request that tells nothing the event did.
func (x *Indexer) refreshNotes(ctx context.Context, ix *searchindex.Index, ids []string) error {
	var put []searchindex.Note
	var gone []string
	for _, id := range ids {
		var n joplin.Note
		err := x.c.Get(ctx, "/notes/"+id, url.Values{"fields": {noteFields}}, &n)
		if domainerr.HasCode(err, domainerr.NotFound) || (err == nil && n.IsConflict != 0) {
			gone = append(gone, id)
			continue
		}
		if err != nil {
			return err
		}
		tagIDs, err := x.noteTagsUnlessIndexed(ctx, ix, n)
		if err != nil {
			return err
		}
		in := toIndex(n, tagIDs)
		if err := attach(ctx, &in, x.fetchOCR); err != nil {
			return err
		}
		put = append(put, in)
	}
	if err := ix.PutNotes(ctx, put); err != nil {
		return err
	}
	if len(gone) > 0 {
		if err := ix.DeleteNotes(ctx, gone); err != nil {
			return err
		}
	}
	cnt, err := ix.Count(ctx)
	if err == nil {
		x.mu.Lock()
		x.notes = cnt
		x.mu.Unlock()
	}
	return err
}

// noteTagsUnlessIndexed reads note n's tag ids, or returns nil (keep the
// indexed links) when the index holds n with the stamp Joplin answered.
func (x *Indexer) noteTagsUnlessIndexed(ctx context.Context, ix *searchindex.Index, n joplin.Note) ([]string, error) {
	held, ok, err := ix.NoteStamp(ctx, n.ID)
	if err != nil {
		return nil, err
	}
	if ok && held == (searchindex.Stamp{ParentID: n.ParentID, UpdatedTime: n.UserUpdatedTime, Deleted: n.DeletedTime}) {
		return nil, nil
	}
	tags, err := joplin.ListAll[idTitle](ctx, x.c, "/notes/"+n.ID+"/tags", url.Values{"fields": {"id"}}, x.cfg.MaxNotes)
	if err != nil && !domainerr.HasCode(err, domainerr.NotFound) {
		return nil, err
	}
	tagIDs := make([]string, 0, len(tags))
	for _, t := range tags {
		tagIDs = append(tagIDs, t.ID)
	}
	return tagIDs, nil
}

// reconcile catches what /events does not report: notebooks, tags and tag
// links are read again in full, and every note's notebook, update and
// trash stamps are compared with the index (changed or missing notes are
// re-read, notes Joplin no longer has are removed).
func (x *Indexer) reconcile(ctx context.Context, ix *searchindex.Index) error {
	fps, err := x.fingerprints(ctx)
	if err != nil {
		return err
	}
	if err := x.refreshFoldersTags(ctx, ix, true); err != nil {
		return err
	}
	if err := x.setFingerprints(ctx, ix, fps); err != nil {
		return err
	}
	if err := x.syncStamps(ctx, ix); err != nil {
		return err
	}
	x.meaning.wake() // new or changed notes to embed
	x.signal("reconciled")
	return nil
}

// syncStamps compares every note's stamps with the index.
func (x *Indexer) syncStamps(ctx context.Context, ix *searchindex.Index) error {
	have, err := ix.Stamps(ctx)
	if err != nil {
		return err
	}
	var stale []string
	// past MaxNotes the index holds nothing more to compare
	past := errors.New("past the index's bound")
	q := url.Values{"fields": {"id,parent_id,user_updated_time,deleted_time"}, "include_deleted": {"1"},
		"order_by": {"created_time"}, "order_dir": {"ASC"}}
	err = joplin.EachPage(ctx, x.c, "/notes", q, func(page int, notes []joplin.Note) error {
		for _, n := range notes {
			s, ok := have[n.ID]
			if !ok || s.ParentID != n.ParentID || s.UpdatedTime != n.UserUpdatedTime || s.Deleted != n.DeletedTime {
				stale = append(stale, n.ID)
			}
			delete(have, n.ID)
		}
		if page*joplin.PageSize > x.cfg.MaxNotes {
			return past
		}
		return nil
	})
	if err != nil && !errors.Is(err, past) {
		return err
	}
	gone := make([]string, 0, len(have))
	for id := range have {
		gone = append(gone, id)
	}
	if len(gone) > 0 {
		if err := ix.DeleteNotes(ctx, gone); err != nil {
			return err
		}
	}
	more, err := x.staleAttachments(ctx, ix)
	if err != nil {
		return err
	}
	return x.refreshNotes(ctx, ix, append(stale, more...))
}
