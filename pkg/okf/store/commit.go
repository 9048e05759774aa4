package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// The commit steps, in order, as passed to Options.Hook. "apply:<i>" runs
// before the i-th file (0-based) is published.
const (
	StepLocked    = "locked"
	StepStaged    = "staged"
	StepJournaled = "journaled" // the point of no return has passed
	StepApplied   = "applied"
	StepVerified  = "verified"
	StepReceipted = "receipted"
)

// FileChange is one file a commit writes or deletes.
type FileChange struct {
	Path    string
	Content []byte // nil deletes the file
	// ExpectSHA, when ExpectSet, is the hex digest the file must have at
	// commit ("" meaning absent); otherwise its current state is the base.
	ExpectSHA string
	ExpectSet bool
}

// Request is one change to commit.
type Request struct {
	Kind          string // e.g. "write_concept"
	Key           string // idempotency key, hex, derived by the caller
	RequestDigest string
	ChangeID      string
	Actor         string
	// ExpectedRevision, when set, must equal the revision at commit.
	ExpectedRevision string
	Files            []FileChange
	// Replayable decides whether a receipt already stored under Key may be
	// returned instead of committing; nil means always.
	Replayable func(Receipt) (bool, error) `json:"-"`
}

// ReceiptFile is one changed file in a receipt.
type ReceiptFile struct {
	Path      string `json:"path"`
	BaseSHA   string `json:"base_sha256,omitempty"`
	ResultSHA string `json:"result_sha256,omitempty"`
}

// Receipt is the durable record of a committed change.
type Receipt struct {
	Format         int           `json:"format"`
	Kind           string        `json:"kind"`
	Key            string        `json:"idempotency_key"`
	RequestDigest  string        `json:"request_digest"`
	ChangeID       string        `json:"change_id"`
	Actor          string        `json:"actor"`
	BaseRevision   string        `json:"base_revision"`
	ResultRevision string        `json:"result_revision"`
	Files          []ReceiptFile `json:"files"`
	CommittedAt    string        `json:"committed_at"`
	Seq            int64         `json:"seq"`
}

// Outcome is what Commit reports.
type Outcome struct {
	Receipt  Receipt
	Replayed bool // an existing durable receipt was returned; nothing written
	Noop     bool // the bundle already held the requested content; nothing written
}

// journal is the commit record written before any bundle file changes.
type journal struct {
	Format  int            `json:"format"`
	TxID    string         `json:"txid"`
	Receipt Receipt        `json:"receipt"`
	Files   []journalEntry `json:"files"`
}

type journalEntry struct {
	Path      string `json:"path"`
	BaseSHA   string `json:"base_sha256"`   // "" = absent
	ResultSHA string `json:"result_sha256"` // "" = deleted
	Stage     string `json:"stage,omitempty"`
	Mode      uint32 `json:"mode,omitempty"`
}

// Commit applies req atomically with respect to crashes: afterwards the
// bundle is byte-exactly at its base or its result, and a durable receipt
// exists for every result.
func (s *Store) Commit(ctx context.Context, req Request) (Outcome, error) {
	if err := validateRequest(req); err != nil {
		return Outcome{}, err
	}
	lease, err := s.LockExclusive(ctx)
	if err != nil {
		return Outcome{}, err
	}
	defer lease.Release()
	if err := s.recoverLocked(ctx); err != nil {
		return Outcome{}, err
	}
	if err := s.step(StepLocked); err != nil {
		return Outcome{}, err
	}
	if rec, ok, err := s.loadReceipt(req.Key); err != nil {
		return Outcome{}, err
	} else if ok {
		replay := true
		if req.Replayable != nil {
			if replay, err = req.Replayable(rec); err != nil {
				return Outcome{}, err
			}
		}
		if replay {
			return Outcome{Receipt: rec, Replayed: true}, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return Outcome{}, cancelled()
	}

	base, err := SnapshotIn(s.root, s.opt.Limits, s.opt.Cache.ForRoot(s.root))
	if err != nil {
		return Outcome{}, err
	}
	if req.ExpectedRevision != "" && req.ExpectedRevision != base.Revision {
		return Outcome{}, domainerr.Retryable(domainerr.RevisionConflict,
			"the bundle revision moved since the plan was made; nothing was written").
			WithDetails(map[string]any{"expected_revision": req.ExpectedRevision, "current_revision": base.Revision})
	}
	entries, err := s.plan(base, req)
	if err != nil {
		return Outcome{}, err
	}
	result := applyToManifest(base, entries)
	rec := Receipt{
		Format: 1, Kind: req.Kind, Key: req.Key, RequestDigest: req.RequestDigest, ChangeID: req.ChangeID,
		Actor: req.Actor, BaseRevision: base.Revision, ResultRevision: result.Revision,
		CommittedAt: time.Now().UTC().Format(time.RFC3339Nano), Seq: time.Now().UnixNano(),
	}
	for _, e := range entries {
		rec.Files = append(rec.Files, ReceiptFile{Path: e.Path, BaseSHA: e.BaseSHA, ResultSHA: e.ResultSHA})
	}
	if len(entries) == 0 {
		return Outcome{Receipt: rec, Noop: true}, nil
	}

	j := journal{Format: 1, TxID: newTxID(), Receipt: rec, Files: entries}
	if err := s.stage(&j, req); err != nil {
		s.cleanStage(j.TxID)
		return Outcome{}, err
	}
	if err := s.step(StepStaged); err != nil {
		s.cleanStage(j.TxID)
		return Outcome{}, err
	}
	if err := ctx.Err(); err != nil {
		s.cleanStage(j.TxID)
		return Outcome{}, cancelled()
	}
	raw, err := json.Marshal(j)
	if err != nil {
		return Outcome{}, fmt.Errorf("store: encode journal: %w", err)
	}
	if err := s.root.WriteFileSynced(journalPath, raw, 0o600); err != nil {
		// The rename may have happened before a failed fsync: the stage
		// may go only once no journal can point at it.
		if rerr := s.root.Remove(journalPath); rerr != nil {
			return Outcome{}, domainerr.New(domainerr.WriteOutcomeUnknown,
				"the commit journal may have been written; the next write to this bundle completes or discards it. Inspect the bundle, then retry the identical request: it replays the receipt if the commit completed").
				WithDetails(map[string]any{"idempotency_key": rec.Key})
		}
		s.cleanStage(j.TxID)
		return Outcome{}, fmt.Errorf("store: write journal: %w", err)
	}
	// Point of no return: from here the commit completes, now or in recovery.
	if err := s.step(StepJournaled); err != nil {
		return Outcome{}, err
	}
	// Past the point of no return the commit completes even if the caller
	// gives up: a durable receipt is success (the contract's "confirmed
	// receipt after cancellation").
	if err := s.finish(context.WithoutCancel(ctx), j); err != nil {
		if de, ok := domainerr.As(err); ok && de.Code == domainerr.BundleCorrupt {
			return Outcome{}, err
		}
		if got, ok, _ := s.loadReceipt(rec.Key); ok && sameReceipt(got, rec) {
			return Outcome{Receipt: rec}, nil // a confirmed receipt is success
		}
		return Outcome{}, domainerr.New(domainerr.WriteOutcomeUnknown,
			"the commit passed its point of no return but did not finish; the next write to this bundle completes it. Inspect the bundle, then retry the identical request to obtain its receipt").
			WithDetails(map[string]any{"idempotency_key": rec.Key})
	}
	return Outcome{Receipt: rec}, nil
}

func cancelled() error {
	return domainerr.Retryable(domainerr.Cancelled, "the commit was cancelled before its point of no return; nothing was written")
}

func validateRequest(req Request) error {
	if !keyPattern.MatchString(req.Key) || req.Kind == "" || req.ChangeID == "" || len(req.Files) == 0 {
		return fmt.Errorf("store: incomplete commit request")
	}
	seen := map[string]bool{}
	for _, f := range req.Files {
		if seen[f.Path] {
			return fmt.Errorf("store: file %q changed twice in one commit", f.Path)
		}
		seen[f.Path] = true
		if !visiblePath(f.Path) {
			return fmt.Errorf("store: commits may touch only visible bundle files (not %s or hidden entries)", Dir)
		}
	}
	return nil
}

// plan re-hashes every file the request touches (never trusting the cache)
// and keeps the ones whose content actually changes, root index.md last.
func (s *Store) plan(base Manifest, req Request) ([]journalEntry, error) {
	var out []journalEntry
	for _, f := range req.Files {
		cur, err := HashFile(s.root, f.Path, s.opt.Limits.MaxFileBytes)
		if err != nil {
			return nil, err
		}
		if cur != base.Lookup(f.Path) {
			return nil, domainerr.Retryable(domainerr.RevisionConflict,
				"file %q changed while the commit was prepared; nothing was written", f.Path)
		}
		if f.ExpectSet && cur != f.ExpectSHA {
			return nil, domainerr.Retryable(domainerr.RevisionConflict,
				"file %q is not in the state the plan was made against; nothing was written", f.Path).
				WithDetails(map[string]any{"path": f.Path})
		}
		want := ""
		if f.Content != nil {
			want = SHA256Hex(f.Content)
		}
		if want == cur {
			continue
		}
		var mode uint32 = 0o644
		if cur != "" {
			if st, err := s.root.Lstat(f.Path); err == nil {
				mode = st.Mode & 0o777
			}
		}
		out = append(out, journalEntry{Path: f.Path, BaseSHA: cur, ResultSHA: want, Mode: mode})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[j].Path == "index.md" && out[i].Path != "index.md" })
	return out, nil
}

// ResultRevision returns the revision base would have after changes (nil
// content deletes), without touching the disk.
func ResultRevision(base Manifest, changes []FileChange) string {
	entries := make([]journalEntry, 0, len(changes))
	for _, c := range changes {
		e := journalEntry{Path: c.Path}
		if c.Content != nil {
			e.ResultSHA = SHA256Hex(c.Content)
		}
		entries = append(entries, e)
	}
	return applyToManifest(base, entries).Revision
}

// applyToManifest returns base with the entries' results applied, keeping
// the files sorted without rebuilding the list from a map.
func applyToManifest(base Manifest, entries []journalEntry) Manifest {
	files := append([]FileState(nil), base.Files...)
	for _, e := range entries {
		i := sort.Search(len(files), func(i int) bool { return files[i].Path >= e.Path })
		found := i < len(files) && files[i].Path == e.Path
		switch {
		case e.ResultSHA == "" && found:
			files = append(files[:i], files[i+1:]...)
		case e.ResultSHA != "" && found:
			files[i].SHA = e.ResultSHA
		case e.ResultSHA != "":
			files = append(files, FileState{})
			copy(files[i+1:], files[i:])
			files[i] = FileState{Path: e.Path, SHA: e.ResultSHA}
		}
	}
	return Manifest{Files: files, Revision: RevisionOf(files)}
}

func newTxID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("store: random source failed: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// stage writes each payload under .okf/stage/<txid>/ and fsyncs it.
func (s *Store) stage(j *journal, req Request) error {
	dir := stageDir + "/" + j.TxID
	if err := s.root.MkdirAll(dir); err != nil {
		return fmt.Errorf("store: create stage: %w", err)
	}
	content := map[string][]byte{}
	for _, f := range req.Files {
		content[f.Path] = f.Content
	}
	var work []int
	for i := range j.Files {
		if j.Files[i].ResultSHA != "" {
			j.Files[i].Stage = dir + "/" + strconv.Itoa(i)
			work = append(work, i)
		}
	}
	// Payloads are written and fsynced by a few workers at once, so the
	// file system can group their journal commits; the stage directory is
	// fsynced once at the end.
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for w := 0; w < min(stageWorkers, len(work)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				e := j.Files[i]
				if err := s.writeStaged(e.Stage, content[e.Path], os.FileMode(e.Mode)); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, i := range work {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return fmt.Errorf("store: stage payload: %w", first)
	}
	if err := s.root.SyncDir(dir); err != nil {
		return fmt.Errorf("store: sync stage: %w", err)
	}
	return nil
}

// stageWorkers is how many payloads are written and fsynced concurrently.
const stageWorkers = 8

func (s *Store) writeStaged(rel string, data []byte, mode os.FileMode) error {
	f, err := s.root.CreateExclusive(rel, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	return errors.Join(werr, serr, cerr)
}

func (s *Store) cleanStage(txid string) {
	dir := stageDir + "/" + txid
	d, err := s.root.OpenDir(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		s.root.Remove(dir + "/" + n)
	}
	s.root.RemoveDir(dir)
}
