// Package identity makes the bridge remember which Joplin it serves, so
// that a change of settings (another URL, another profile behind the same
// URL) cannot silently hand an agent another person's notes, or write into
// the wrong ones. Joplin's Data API exposes no profile identity, so the
// identity is a set of anchors recorded at first contact: the ids and
// creation times of the oldest notebooks and notes. The same notes synced
// to another device keep their ids and times, so a profile that syncs the
// same notes counts as the same Joplin; a Joplin holding none of the
// anchors is another one, refused with JOPLIN_CHANGED until the operator
// accepts it (Forget, `notebridge joplin forget`).
package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// FileName is the identity file in the state directory.
const FileName = "joplin-identity.json"

// anchorsPerKind is how many of the oldest notebooks and notes are
// recorded: the identity survives until all of them are deleted for good.
const anchorsPerKind = 3

// ForgetCommand is what the operator runs to accept another Joplin.
const ForgetCommand = "notebridge joplin forget"

// Record is the identity file.
type Record struct {
	Schema     int       `json:"schema"`
	RecordedAt time.Time `json:"recorded_at"`
	// Endpoint is the URL the Joplin was first seen at (for the operator).
	Endpoint string   `json:"endpoint"`
	Anchors  []Anchor `json:"anchors"`
}

// Anchor is one object the recorded Joplin holds.
type Anchor struct {
	Kind    string `json:"kind"` // "folders" or "notes"
	ID      string `json:"id"`
	Created int64  `json:"created_time"`
}

// Guard is a joplin.Guard: the first request, and the first after Joplin
// was unreachable, checks the Joplin against the recorded identity.
type Guard struct {
	c    *joplin.Client
	path string
	log  *slog.Logger
	now  func() time.Time

	ok atomic.Bool // verified since the last loss of contact
	// emptyUntil (Unix ns, 0: none) ends the trust in an empty Joplin: it
	// is looked at again then, to record anchors once it holds something.
	emptyUntil atomic.Int64
	mu         sync.Mutex // one check at a time
	// OnAccept, when set, runs after the operator accepted another Joplin
	// (its identity replaced a refused one): caches of the old one go.
	OnAccept func()
	// refused holds the last refusal, answered again for refuseFor
	// without asking Joplin while the identity file stays.
	refused   bool
	refusedAt time.Time
	refusal   error
}

// refuseFor bounds how often a refused Joplin is asked again.
const refuseFor = 5 * time.Second

// New returns a guard for c keeping the identity in stateDir. Install it
// with c.SetGuard.
func New(c *joplin.Client, stateDir string, log *slog.Logger) *Guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guard{c: c, path: filepath.Join(stateDir, FileName), log: log, now: time.Now}
}

// emptyRecheck is how long an empty Joplin is trusted before looking again.
const emptyRecheck = time.Minute

// Check verifies the Joplin once, then again after a loss of contact.
func (g *Guard) Check(ctx context.Context) error {
	if g.trusted() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.trusted() {
		return nil
	}
	// The guard sees the whole Joplin whoever calls: it checks as
	// notebridge itself, never through the caller's notebook scope.
	err := g.verify(principal.With(joplin.Unguarded(ctx), principal.System()))
	if err == nil {
		g.ok.Store(true)
	}
	return err
}

func (g *Guard) trusted() bool {
	if !g.ok.Load() {
		return false
	}
	until := g.emptyUntil.Load()
	return until == 0 || g.now().UnixNano() < until
}

// Lost makes the next request check again.
func (g *Guard) Lost() { g.ok.Store(false) }

// verify compares the Joplin with the identity file, recording it when
// there is none.
func (g *Guard) verify(ctx context.Context) error {
	if g.refused && g.now().Sub(g.refusedAt) < refuseFor {
		if _, err := os.Stat(g.path); err == nil {
			return g.refusal
		}
	}
	rec, err := Load(g.path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := g.record(ctx, "first contact"); err != nil {
			return err
		}
		if g.refused { // the operator forgot the refused identity
			g.refused = false
			g.log.Warn("serving the Joplin the operator accepted", "url", g.c.BaseURL())
			if g.OnAccept != nil {
				g.OnAccept()
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if len(rec.Anchors) == 0 {
		// Empty when recorded: the same address may have filled up (a
		// first sync); another address holding notes is another Joplin.
		anchors, err := g.anchorsNow(ctx)
		if err != nil {
			return err
		}
		if len(anchors) > 0 && rec.Endpoint != g.c.Endpoint() {
			return g.refuse(rec)
		}
		g.back()
		return g.save(anchors, "the Joplin first seen was empty")
	}
	// An id is 128 random bits: the same id is the same object. (Times
	// are not compared: an item synced but not decrypted yet has none.)
	found := -1
	for i, a := range rec.Anchors {
		err := g.c.Get(ctx, "/"+a.Kind+"/"+a.ID, url.Values{"fields": {"id"}}, nil)
		if domainerr.HasCode(err, domainerr.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		found = i
		break
	}
	if found < 0 {
		return g.refuse(rec)
	}
	g.back()
	if found > 0 {
		// Some anchors are gone for good: record today's oldest objects.
		return g.record(ctx, "anchors refreshed")
	}
	return nil
}

// refuse records and returns the refusal of a Joplin that is not rec's.
// The refusal is logged once, when it begins.
func (g *Guard) refuse(rec Record) error {
	if !g.refused {
		g.log.Error("the Joplin at the configured URL is not the one this bridge served; refusing to use it",
			"url", g.c.BaseURL(), "first_seen_at", rec.Endpoint, "identity_file", g.path, "accept_with", ForgetCommand)
	}
	g.refused, g.refusedAt, g.refusal = true, g.now(), changed(g.c.BaseURL(), rec)
	return g.refusal
}

// back ends a refusal: the settings point at the Joplin served before.
func (g *Guard) back() {
	if g.refused {
		g.refused = false
		g.log.Info("the Joplin this bridge served answers again", "url", g.c.BaseURL())
	}
}

// record writes the identity of the Joplin now served.
func (g *Guard) record(ctx context.Context, why string) error {
	anchors, err := g.anchorsNow(ctx)
	if err != nil {
		return err
	}
	return g.save(anchors, why)
}

// anchorsNow reads the oldest notebooks and notes of the Joplin served.
func (g *Guard) anchorsNow(ctx context.Context) ([]Anchor, error) {
	var anchors []Anchor
	for _, kind := range []string{"folders", "notes"} {
		var page struct {
			Items []Anchor `json:"items"`
		}
		q := url.Values{"fields": {"id,created_time"}, "order_by": {"created_time"}, "order_dir": {"ASC"},
			"limit": {strconv.Itoa(anchorsPerKind)}}
		if kind == "notes" {
			q.Set("include_deleted", "1")
		}
		if err := g.c.Get(ctx, "/"+kind, q, &page); err != nil {
			return nil, err
		}
		for _, a := range page.Items {
			anchors = append(anchors, Anchor{Kind: kind, ID: a.ID, Created: a.Created})
		}
	}
	return anchors, nil
}

// save writes anchors as the identity of the Joplin now served.
func (g *Guard) save(anchors []Anchor, why string) error {
	if anchors == nil {
		anchors = []Anchor{}
	}
	rec := Record{Schema: 1, RecordedAt: g.now().UTC(), Endpoint: g.c.Endpoint(), Anchors: anchors}
	if err := save(g.path, rec); err != nil {
		return fmt.Errorf("joplin identity: %w", err)
	}
	g.log.Info("recorded the identity of the Joplin this bridge serves", "why", why, "anchors", len(anchors), "file", g.path)
	var until int64
	if len(anchors) == 0 {
		// Trusted for now; looked at again later, so that anchors are
		// recorded as soon as the Joplin holds a notebook or a note.
		until = g.now().Add(emptyRecheck).UnixNano()
	}
	g.emptyUntil.Store(until)
	return nil
}

func changed(url string, rec Record) *domainerr.Error {
	return domainerr.New(domainerr.JoplinChanged,
		"the Joplin at %s is not the one this bridge served before (first seen at %s on %s): none of the notebooks or notes recorded then exist there. "+
			"If the settings changed by mistake, fix NOTEBRIDGE_JOPLIN_URL and COMPOSE_PROFILES in .env; to serve this Joplin from now on, run `%s` "+
			"(docker compose exec bridge %s)", url, rec.Endpoint, rec.RecordedAt.Format("2006-01-02"), ForgetCommand, ForgetCommand).
		WithDetails(map[string]any{"accept_with": ForgetCommand})
}

// Load reads an identity file.
func Load(path string) (Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil || rec.Schema != 1 {
		return Record{}, domainerr.New(domainerr.JoplinChanged,
			"the record of the Joplin this bridge serves (%s in the state directory) is damaged; run `%s` to record the Joplin served now", FileName, ForgetCommand).
			WithDetails(map[string]any{"accept_with": ForgetCommand})
	}
	return rec, nil
}

func save(path string, rec Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), time.Time{})
}

// Forget removes the identity in stateDir, so that the next request
// records the Joplin served then. It reports whether there was one.
func Forget(stateDir string) (bool, error) {
	err := os.Remove(filepath.Join(stateDir, FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, atomicfile.SyncDir(stateDir)
}
