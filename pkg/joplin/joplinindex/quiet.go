package joplinindex

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

// Defaults of the quiet background (issue 25).
const (
	// DefaultIdlePoll is the /events polling interval once no search or
	// write has come for a while.
	DefaultIdlePoll = 30 * time.Second
	// DefaultFullReconcile is the interval of the full reconciliation
	// pass (every tag's notes, every note's stamps).
	DefaultFullReconcile = time.Hour
)

// pollWait is the wait before the next poll after idle polls without a
// search or a write: the active interval, doubled per idle poll up to
// the idle interval.
func pollWait(active, idle time.Duration, idlePolls int) time.Duration {
	w := active << min(idlePolls, 16)
	if w <= 0 || w > idle {
		return max(idle, active)
	}
	return w
}

// touch records a search or a write: polling goes back to the active
// interval, at once.
func (x *Indexer) touch() {
	x.idlePolls.Store(0)
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// catchUp has the loop poll /events now, unless it did within
// cfg.CatchUp, and waits (at most 2 s) for that poll: a search sees the
// external changes made before it, however long the loop was idle.
func (x *Indexer) catchUp(ctx context.Context) {
	if time.Since(time.Unix(0, x.lastPoll.Load())) < x.cfg.CatchUp {
		return
	}
	done := make(chan struct{})
	select {
	case x.catchUps <- done:
	default:
		return // the loop is not running, or another search asked already
	}
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// fingerprint is the most recently updated item of a Joplin list, one
// request: a notebook or tag created, renamed or trashed moves it.
func (x *Indexer) fingerprint(ctx context.Context, path string) (string, error) {
	var page struct {
		Items []struct {
			ID          string `json:"id"`
			UpdatedTime int64  `json:"updated_time"`
		} `json:"items"`
	}
	q := url.Values{"fields": {"id,updated_time"}, "order_by": {"updated_time"}, "order_dir": {"DESC"}, "limit": {"1"}}
	if err := x.c.Get(ctx, path, q, &page); err != nil {
		return "", err
	}
	if len(page.Items) == 0 {
		return "none", nil
	}
	return page.Items[0].ID + "@" + strconv.FormatInt(page.Items[0].UpdatedTime, 10), nil
}

// lightReconcile asks Joplin only whether notebooks or tags changed (two
// requests) and re-reads a list only when its fingerprint moved: the
// notebooks, or the tags with their links. The full pass (reconcile)
// catches the rest, at cfg.FullReconcile.
func (x *Indexer) lightReconcile(ctx context.Context, ix *searchindex.Index) error {
	for _, list := range fingerprintKeys {
		fp, err := x.fingerprint(ctx, list.path)
		if err != nil {
			return err
		}
		old, err := ix.Meta(ctx, list.key)
		if err != nil {
			return err
		}
		if fp == old {
			continue
		}
		if list.path == "/folders" {
			err = x.refreshFolders(ctx, ix)
		} else {
			err = x.refreshTags(ctx, ix, true)
		}
		if err != nil {
			return err
		}
		if err := ix.SetMeta(ctx, list.key, fp); err != nil {
			return err
		}
	}
	x.signal("checked")
	return nil
}

// fingerprintKeys are the lists the light check watches, with the meta
// key their fingerprint is kept under.
var fingerprintKeys = []struct{ path, key string }{{"/folders", "folders_fp"}, {"/tags", "tags_fp"}}

// fingerprints reads the lists' fingerprints; taken before a full read of
// the lists, a change made during the read moves them again.
func (x *Indexer) fingerprints(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, list := range fingerprintKeys {
		fp, err := x.fingerprint(ctx, list.path)
		if err != nil {
			return nil, err
		}
		out[list.key] = fp
	}
	return out, nil
}

// setFingerprints records fingerprints taken before a full read of the
// lists, so the next light check asks nothing more when nothing moved.
func (x *Indexer) setFingerprints(ctx context.Context, ix *searchindex.Index, fps map[string]string) error {
	for key, fp := range fps {
		if err := ix.SetMeta(ctx, key, fp); err != nil {
			return err
		}
	}
	return nil
}
