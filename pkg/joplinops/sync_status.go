package joplinops

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/schema"
	"github.com/notebridge/notebridge/pkg/syncstate"
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
	Target              string     `json:"target,omitempty"`
	State               string     `json:"state"`
	LastSuccessAt       string     `json:"last_success_at,omitempty"`
	LastAttemptAt       string     `json:"last_attempt_at,omitempty"`
	NextSyncAt          string     `json:"next_sync_at,omitempty"`
	ConsecutiveFailures int64      `json:"consecutive_failures"`
	LastError           *syncError `json:"last_error,omitempty"`
	E2EE                *e2eeOut   `json:"e2ee,omitempty"`
	Message             string     `json:"message"`
}

type syncError struct {
	Code    string `json:"code"`
	Setting string `json:"setting,omitempty"`
	Message string `json:"message"`
	At      string `json:"at,omitempty"`
}

type e2eeOut struct {
	Enabled           bool   `json:"enabled"`
	MasterPasswordSet bool   `json:"master_password_set"`
	PasswordOK        *bool  `json:"password_ok,omitempty"`
	ItemsEncrypted    *int64 `json:"items_encrypted,omitempty"`
	// NotesEncrypted is counted by the bridge when the Joplin container
	// reports no item count.
	NotesEncrypted *int64 `json:"notes_encrypted,omitempty"`
}

// Bounds of the texts copied from status.json into the answer.
const (
	maxSyncText    = 2000
	maxSyncCode    = 64
	maxSyncSetting = 128
)

func syncSchema() schema.S {
	when := func(d string) schema.S { return schema.String(d+" (RFC 3339).", 0, 40) }
	return schema.Object("Sync of the Joplin profile with the person's sync target, as the Joplin container reports it.", map[string]any{
		"configured": schema.Bool("Whether the Joplin container reports a sync state to this bridge."),
		"target":     schema.String("Sync target kind: none, joplin-server, joplin-cloud, webdav, nextcloud, filesystem, s3, dropbox, onedrive.", 0, 32),
		"state": schema.Enum("unknown: not reported, or the report cannot be read.",
			"unknown", "disabled", "starting", "idle", "syncing", "error", "config_error", "needs_authorization"),
		"last_success_at":      when("Last successful sync"),
		"last_attempt_at":      when("Last sync attempt"),
		"next_sync_at":         when("Next scheduled sync"),
		"consecutive_failures": schema.Integer("", 0, 1<<53),
		"last_error": schema.Object("Last sync failure.", map[string]any{
			"code":    schema.String("SYNC_AUTH_FAILED, SYNC_UNREACHABLE, SYNC_BAD_URL, SYNC_CONFIG, SYNC_NEEDS_AUTHORIZATION, E2EE_WRONG_PASSWORD, E2EE_PASSWORD_MISSING or SYNC_FAILED.", 0, maxSyncCode),
			"setting": schema.String("The setting to check.", 0, maxSyncSetting),
			"message": schema.String("", 0, maxSyncText),
			"at":      when("When"),
		}, "code", "message"),
		"e2ee": schema.Object("End-to-end encryption.", map[string]any{
			"enabled":             schema.Bool(""),
			"master_password_set": schema.Bool(""),
			"password_ok":         schema.Bool("Whether the master password decrypts the data; absent when not known."),
			"items_encrypted":     schema.Integer("Items still encrypted (not decrypted yet, or undecryptable); absent when not known.", 0, 1<<53),
			"notes_encrypted":     schema.Integer("When items_encrypted is not known: notes Joplin holds still encrypted, counted up to 100 (unreadable until the master password is set right).", 0, MaxConflicts),
		}, "enabled", "master_password_set"),
		"message": schema.String("Summary.", 0, maxSyncText+200),
	}, "configured", "state", "consecutive_failures", "message")
}

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
	}
	out.Message = "sync " + st.State
	if out.LastError != nil && st.State != "idle" && st.State != "syncing" {
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
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// MaxConflicts bounds the conflict copies one request reads: Joplin sorts
// them first, so one page of this size holds them all unless there are
// more, which the answer then says.
const MaxConflicts = 100

// conflictsOut is the conflicts part of joplin_status.
type conflictsOut struct {
	Count     int            `json:"count"`
	Truncated bool           `json:"truncated"`
	Copies    []conflictCopy `json:"copies"`
}

type conflictCopy struct {
	ID         string `json:"id"`
	OriginalID string `json:"original_id"`
}

// maxCopiesListed bounds the copies joplin_status lists.
const maxCopiesListed = 20

func conflictsSchema() schema.S {
	return schema.Object("Conflict copies: when a note changed both here and on another device between syncs, Joplin keeps the other device's version under the note's id and this profile's version as a conflict copy (is_conflict), which is never uploaded. Read a copy with get_note; merge it into the original with update_note, then trash the copy.", map[string]any{
		"count":     schema.Integer("Conflict copies not in the trash.", 0, MaxConflicts),
		"truncated": schema.Bool("There are more than count."),
		"copies": schema.Array("", schema.Object("", map[string]any{
			"id": schema.ID("The copy."), "original_id": schema.ID("The note it conflicts with; empty when unknown."),
		}, "id", "original_id"), maxCopiesListed),
	}, "count", "truncated", "copies")
}

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
	notes, more, err := o.flaggedNotes(ctx, "is_conflict", url.Values{"include_conflicts": {"1"}, "fields": {"id,is_conflict,conflict_original_id"}})
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
	var out []string
	for _, cc := range all {
		if cc.OriginalID == id {
			out = append(out, cc.ID)
		}
	}
	return out
}
