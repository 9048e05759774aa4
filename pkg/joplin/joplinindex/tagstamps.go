package joplinindex

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

// Joplin's /events reports no tag links, so when the tags' fingerprint
// moves the light check must learn which tags changed. Reading every
// tag's notes costs one request per tag the person owns (329 in the
// minute after one tag change on a Joplin with 300 tags, issue 35); the
// index instead keeps each tag's updated time as it last read it, reads
// the tags newest first until it reaches those it knows, and re-reads the
// notes of the tags created or renamed since. Only when a tag it knew is
// gone from the top (the newest deleted) does it read the whole list, to
// learn which are gone, and even then no tag's notes.

// tagStampsKey is the meta key of the tags' updated times (JSON, tag id
// -> Unix ms) as the index last read them with their notes.
const tagStampsKey = "tag_stamps"

// tagRow is a tag as the light check reads it.
type tagRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	UpdatedTime int64  `json:"updated_time"`
}

// tagFields are the fields tagRow reads.
const tagFields = "id,title,updated_time"

// loadTagStamps returns the stamps the index holds; ok is false when it
// holds none (an index built before they were kept).
func loadTagStamps(ctx context.Context, ix *searchindex.Index) (stamps map[string]int64, ok bool, err error) {
	raw, err := ix.Meta(ctx, tagStampsKey)
	if err != nil || raw == "" {
		return nil, false, err
	}
	if err := json.Unmarshal([]byte(raw), &stamps); err != nil {
		return nil, false, nil // unreadable: read everything again
	}
	return stamps, true, nil
}

// saveTagStamps records the stamps of tags, after their notes are in the
// index: an interruption in between leaves older stamps, so the next
// check reads more, never less.
func saveTagStamps(ctx context.Context, ix *searchindex.Index, stamps map[string]int64) error {
	raw, err := json.Marshal(stamps)
	if err != nil {
		return err
	}
	return ix.SetMeta(ctx, tagStampsKey, string(raw))
}

// errKnownTags ends a newest-first read of the tags at the first tag
// older than every change the index has not seen.
var errKnownTags = errors.New("reached the tags the index knows")

// refreshChangedTags brings the index's tags up to date after the tags'
// fingerprint moved, reading the notes of only the tags created or
// renamed since the index last read them.
func (x *Indexer) refreshChangedTags(ctx context.Context, ix *searchindex.Index) error {
	old, ok, err := loadTagStamps(ctx, ix)
	if err != nil {
		return err
	}
	if !ok {
		return x.refreshTags(ctx, ix, true)
	}
	var newest int64
	for _, t := range old {
		newest = max(newest, t)
	}
	// Newest first, up to the first tag older than the newest known one:
	// every tag created or renamed since is above it. When a tag the
	// index knew as newest is not among them (deleted, or its time moved
	// back), only the whole list tells which are gone: read on to the end.
	var all []tagRow
	complete, readOn := true, false
	q := url.Values{"fields": {tagFields}, "order_by": {"updated_time"}, "order_dir": {"DESC"}}
	err = joplin.EachPage(ctx, x.c, "/tags", q, func(_ int, items []tagRow) error {
		for _, t := range items {
			if !readOn && t.UpdatedTime < newest {
				if holdsNewest(all, old, newest) {
					complete = false
					return errKnownTags
				}
				readOn = true
			}
			all = append(all, t)
		}
		if len(all) > x.cfg.MaxNotes {
			return domainerr.New(domainerr.JoplinError, "Joplin holds more than %d tags; the search index stops there", x.cfg.MaxNotes)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errKnownTags) {
		return err
	}
	stamps := make(map[string]int64, len(old)+len(all))
	if !complete {
		for id, t := range old {
			stamps[id] = t
		}
	}
	var changed []searchindex.Tag
	notesOf := map[string][]string{}
	for _, t := range all {
		stamps[t.ID] = t.UpdatedTime
		if was, known := old[t.ID]; known && was == t.UpdatedTime {
			continue
		}
		notes, err := x.tagNotes(ctx, t.ID)
		if err != nil {
			return err
		}
		changed = append(changed, searchindex.Tag{ID: t.ID, Title: t.Title})
		notesOf[t.ID] = notes
	}
	var gone []string
	if complete {
		for id := range old {
			if _, still := stamps[id]; !still {
				gone = append(gone, id)
			}
		}
	}
	if err := ix.UpdateTags(ctx, changed, notesOf, gone); err != nil {
		return err
	}
	return saveTagStamps(ctx, ix, stamps)
}

// holdsNewest reports whether top still holds every tag the index knew
// with the newest time, unchanged.
func holdsNewest(top []tagRow, old map[string]int64, newest int64) bool {
	have := map[string]int64{}
	for _, t := range top {
		have[t.ID] = t.UpdatedTime
	}
	for id, t := range old {
		if t == newest && have[id] != t {
			return false
		}
	}
	return true
}
