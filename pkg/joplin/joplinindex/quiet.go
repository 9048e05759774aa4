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

// catchUp has the loop poll /events now and waits (at most 2 s) for that
// poll: a search sees the external changes made before it, however long
// the loop was idle. Only a poll another search asked for, begun within
// cfg.CatchUp, spares it: a background poll a moment before the search
// may have run before a change the search must see (issue 35). Searches
// arriving while a request waits for the loop share it.
func (x *Indexer) catchUp(ctx context.Context) {
	if time.Since(time.Unix(0, x.lastCatchUp.Load())) < x.cfg.CatchUp {
		return
	}
	x.askMu.Lock()
	done := x.asked
	if done == nil {
		// The buffer (one) is empty while no request waits: this send
		// never blocks, and the loop serves it once running.
		done = make(chan struct{})
		x.catchUps <- done
		x.asked = done
	}
	x.askMu.Unlock()
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// takeCatchUp is the loop taking request w: from now on a search asks
// for a new one, which the next step serves, and the step about to begin
// is the latest a search asked for.
func (x *Indexer) takeCatchUp(w chan struct{}) chan struct{} {
	x.askMu.Lock()
	if x.asked == w {
		x.asked = nil
	}
	x.askMu.Unlock()
	x.lastCatchUp.Store(time.Now().UnixNano())
	return w
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
// notebooks, or the tags changed since with their links. The full pass (reconcile)
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
			err = x.refreshChangedTags(ctx, ix)
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
