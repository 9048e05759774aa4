package joplinops

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
)

// WithSyncState makes joplin_status report the sync state the Joplin
// container shares (r), and refreshes the known conflict copies after
// every completed sync.
func WithSyncState(r *syncstate.Reader) Option {
	return func(o *Ops) { o.sync = r }
}

// syncOut is the sync part of joplin_status.
type syncOut struct {
	Configured          bool       `json:"configured"`
	Target              string     `json:"target,omitempty" schema:"max=32"`
	State               string     `json:"state" schema:"enum=unknown|disabled|starting|idle|syncing|error|config_error|needs_authorization"`
	LastSuccessAt       string     `json:"last_success_at,omitempty" schema:"max=40"`
	LastAttemptAt       string     `json:"last_attempt_at,omitempty" schema:"max=40"`
	NextSyncAt          string     `json:"next_sync_at,omitempty" schema:"max=40"`
	ConsecutiveFailures int64      `json:"consecutive_failures" schema:"min=0,max=9007199254740992"`
	LastError           *syncError `json:"last_error,omitempty"`
	E2EE                *e2eeOut   `json:"e2ee,omitempty"`
	Message             string     `json:"message" schema:"max=@max_sync_summary"`
}

type syncError struct {
	Code    string `json:"code" schema:"max=@max_sync_code"`
	Setting string `json:"setting,omitempty" schema:"max=@max_sync_setting"`
	Message string `json:"message" schema:"max=@max_sync_text"`
	At      string `json:"at,omitempty" schema:"max=40"`
}

type e2eeOut struct {
	Enabled           bool  `json:"enabled"`
	MasterPasswordSet bool  `json:"master_password_set"`
	PasswordOK        *bool `json:"password_ok,omitempty"`
	// ItemsEncrypted is what is still encrypted, under one name before
	// and after the first sync (issue 36); Counted says what it counts:
	// items, the Joplin container's count of every item; notes, the
	// bridge's count of the notes the caller sees (the container has no
	// count yet, or the caller sees only some notebooks).
	ItemsEncrypted *int64 `json:"items_encrypted,omitempty" schema:"min=0,max=9007199254740992"`
	Counted        string `json:"counted,omitempty" schema:"enum=items|notes"`
}

// Bounds of the texts copied from status.json into the answer.
const (
	maxSyncText    = 2000
	maxSyncCode    = 64
	maxSyncSetting = 128
)

// syncStatus reads the shared sync state; it never fails the tool.
func (o *Ops) syncStatus() *syncOut {
	if !o.sync.Configured() {
		return &syncOut{State: "unknown", Message: "sync state is not shared with this bridge (--sync-state-dir); sync, if any, is managed outside notebridge"}
	}
	st, err := o.sync.Read()
	if errors.Is(err, syncstate.ErrNotConfigured) {
		return &syncOut{State: "unknown", Message: "the Joplin container has not reported a sync state yet (no " + syncstate.StatusFile + ")"}
	}
	if err != nil {
		return &syncOut{Configured: true, State: "unknown", Message: clip(err.Error(), maxSyncText)}
	}
	out := &syncOut{
		Configured: true, Target: clip(st.Target, 32), State: st.State,
		LastSuccessAt: stamp(st.LastSuccessAt), LastAttemptAt: stamp(st.LastAttemptAt), NextSyncAt: stamp(st.NextSyncAt),
		ConsecutiveFailures: max(st.ConsecutiveFailures, 0),
	}
	if e := st.LastError; e != nil {
		out.LastError = &syncError{Code: clip(e.Code, maxSyncCode), Setting: clip(e.Setting, maxSyncSetting),
			Message: clip(e.Message, maxSyncText), At: stamp(e.At)}
	}
	if e := st.E2EE; e != nil {
		out.E2EE = &e2eeOut{Enabled: e.Enabled, MasterPasswordSet: e.MasterPasswordSet, PasswordOK: e.PasswordOK, ItemsEncrypted: e.ItemsEncrypted}
		if n := e.ItemsEncrypted; n != nil && *n < 0 {
			out.E2EE.ItemsEncrypted = nil
		}
		if out.E2EE.ItemsEncrypted != nil {
			out.E2EE.Counted = "items"
		}
	}
	out.Message = "sync " + st.State
	if out.LastError != nil && st.State != syncstate.StateIdle && st.State != syncstate.StateSyncing {
		out.Message += ": " + out.LastError.Code + " (" + out.LastError.Message + ")"
	}
	return out
}

func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// MaxConflicts bounds the conflict copies one request reads: Joplin sorts
// them first, so one page of this size holds them all unless there are
// more, which the answer then says.
const MaxConflicts = 100

// conflictsOut is the conflicts part of joplin_status.
type conflictsOut struct {
	Count     int            `json:"count" schema:"min=0,max=@max_conflicts"`
	Truncated bool           `json:"truncated"`
	Copies    []conflictCopy `json:"copies" schema:"max=@max_copies_listed"`
}

type conflictCopy struct {
	ID         string `json:"id" schema:"id"`
	OriginalID string `json:"original_id,omitempty" schema:"id,optional"`
}

// maxCopiesListed bounds the copies joplin_status lists.
const maxCopiesListed = 20

// conflictCache holds the conflict copies by original note, read again
// after every completed sync (the only time Joplin makes them) and by
// joplin_status.
type conflictCache struct {
	mu    sync.Mutex
	valid bool
	gen   int64
	all   []conflictCopy
	more  bool
}

// readConflicts reads the conflict copies (one request, bounded) and
// caches them under the sync generation gen.
func (o *Ops) readConflicts(ctx context.Context, gen int64) ([]conflictCopy, bool, error) {
	// The cache serves every caller: it is read whole, and each caller's
	// share is taken from it (visibleCopies).
	notes, more, err := o.flaggedNotes(principal.With(ctx, principal.System()), "is_conflict", conflictQuery())
	if err != nil {
		return nil, false, err
	}
	var all []conflictCopy
	for _, n := range notes {
		all = append(all, conflictCopy{ID: n.ID, OriginalID: n.OriginalID})
	}
	c := &o.conflicts
	c.mu.Lock()
	c.valid, c.gen, c.all, c.more = true, gen, all, more
	c.mu.Unlock()
	return all, more, nil
}

func conflictQuery() url.Values {
	return url.Values{"include_conflicts": {"1"}, "fields": {"id,is_conflict,conflict_original_id"}}
}

// visibleCopies keeps the conflict copies ctx's caller may see, and an
// original id only when it may see the original too. A caller limited to
// some notebooks gets them from Joplin through the client's view.
func (o *Ops) visibleCopies(ctx context.Context, all []conflictCopy) ([]conflictCopy, error) {
	if !scopeview.Limited(ctx) || len(all) == 0 {
		return all, nil
	}
	visible, _, err := o.flaggedNotes(ctx, "is_conflict", conflictQuery())
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(visible))
	for _, n := range visible {
		seen[n.ID] = true
	}
	var out []conflictCopy
	for _, cc := range all {
		if !seen[cc.ID] {
			continue
		}
		if cc.OriginalID != "" && o.c.Get(ctx, "/notes/"+cc.OriginalID, url.Values{"fields": {"id"}}, nil) != nil {
			cc.OriginalID = ""
		}
		out = append(out, cc)
	}
	return out, nil
}

// flaggedNote is a note listed by flaggedNotes.
type flaggedNote struct {
	ID                string `json:"id"`
	IsConflict        int    `json:"is_conflict"`
	EncryptionApplied int    `json:"encryption_applied"`
	OriginalID        string `json:"conflict_original_id"`
}

// flaggedNotes lists, in one request, up to MaxConflicts notes whose flag
// (is_conflict or encryption_applied, a 0/1 column; q's fields name it)
// is set: ordered by it, Joplin lists them first. more: there may
// be others past the bound.
func (o *Ops) flaggedNotes(ctx context.Context, flag string, q url.Values) ([]flaggedNote, bool, error) {
	q.Set("order_by", flag)
	q.Set("order_dir", "DESC")
	q.Set("limit", strconv.Itoa(MaxConflicts))
	var page struct {
		Items   []flaggedNote `json:"items"`
		HasMore bool          `json:"has_more"`
	}
	if err := o.c.Get(ctx, "/notes", q, &page); err != nil {
		return nil, false, err
	}
	var out []flaggedNote
	for _, n := range page.Items {
		set := n.IsConflict != 0
		if flag == "encryption_applied" {
			set = n.EncryptionApplied != 0
		}
		if !set {
			break
		}
		out = append(out, n)
	}
	return out, len(out) == MaxConflicts && page.HasMore, nil
}

// encryptedNotes counts the notes still encrypted (up to MaxConflicts),
// for a status whose Joplin container could not count the items (no or a
// wrong master password).
func (o *Ops) encryptedNotes(ctx context.Context) (int64, error) {
	notes, _, err := o.flaggedNotes(ctx, "encryption_applied", url.Values{"include_deleted": {"1"}, "fields": {"id,encryption_applied"}})
	return int64(len(notes)), err
}

// conflictStatus is the conflicts part of joplin_status (always read).
func (o *Ops) conflictStatus(ctx context.Context) (*conflictsOut, error) {
	gen, _ := o.sync.Generation()
	all, more, err := o.readConflicts(ctx, gen)
	if err == nil {
		all, err = o.visibleCopies(ctx, all)
	}
	if err != nil {
		return nil, err
	}
	out := &conflictsOut{Count: len(all), Truncated: more, Copies: all[:min(len(all), maxCopiesListed)]}
	if out.Copies == nil {
		out.Copies = []conflictCopy{}
	}
	return out, nil
}

// copiesOf returns the conflict copies of note id that are known: read
// again when a sync completed since they were last read; without a sync
// state, those joplin_status last saw. A failure to read them is no
// failure of the caller: it returns none.
func (o *Ops) copiesOf(ctx context.Context, id string) []string {
	gen, ok := o.sync.Generation()
	c := &o.conflicts
	c.mu.Lock()
	stale := ok && (!c.valid || c.gen != gen)
	all := c.all
	c.mu.Unlock()
	if stale {
		var err error
		if all, _, err = o.readConflicts(ctx, gen); err != nil {
			return nil
		}
	}
	// Only id's copies are checked against the caller's scope: the others
	// would cost a request each and be dropped.
	var mine []conflictCopy
	for _, cc := range all {
		if cc.OriginalID == id {
			mine = append(mine, cc)
		}
	}
	mine, err := o.visibleCopies(ctx, mine)
	if err != nil {
		return nil
	}
	var out []string
	for _, cc := range mine {
		if cc.OriginalID == id { // visibleCopies drops an original the caller may not see
			out = append(out, cc.ID)
		}
	}
	return out
}
