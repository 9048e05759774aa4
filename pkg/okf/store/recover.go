package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// finish publishes a durable journal's files (root index.md last, as the
// journal orders them), verifies, writes the receipt and cleans up. It is
// idempotent: files already in their result state are skipped, so recovery
// reuses it. It checks ctx before each file: a commit past its point of no
// return passes a context that is never cancelled; recovery passes its
// caller's, and stopping between files leaves the durable journal for the
// next recovery.
func (s *Store) finish(ctx context.Context, j journal) error {
	// Files are renamed into place without a directory fsync each; every
	// touched directory is fsynced once before the root index.md (always
	// last in the journal) is published, and the root after it. A crash
	// in between is safe: the journal is durable and recovery redoes any
	// file not yet in its result state from its fsynced stage.
	dirty := map[string]bool{}
	for i, e := range j.Files {
		if ctx.Err() != nil {
			return recoveryCancelled()
		}
		if e.Path == "index.md" {
			if err := s.syncDirs(dirty); err != nil {
				return err
			}
		}
		if err := s.step("apply:" + strconv.Itoa(i)); err != nil {
			return err
		}
		cur, err := HashFile(s.root, e.Path, s.opt.Limits.MaxFileBytes)
		if err != nil {
			return fmt.Errorf("store: apply %q: %w", e.Path, err)
		}
		if cur == e.ResultSHA {
			// Perhaps published by a run that crashed before its directory
			// fsync: make that rename durable before the receipt too.
			if dir := parent(e.Path); e.ResultSHA != "" || dir == "" {
				markDirty(dirty, dir)
			} else if _, err := s.root.Lstat(dir); err == nil {
				markDirty(dirty, dir)
			}
			continue
		}
		if cur != e.BaseSHA {
			return corrupt("file %q is in neither its base nor its result state", e.Path)
		}
		markDirty(dirty, parent(e.Path))
		if e.ResultSHA == "" {
			if err := s.root.Remove(e.Path); err != nil {
				return fmt.Errorf("store: delete %q: %w", e.Path, err)
			}
			continue
		}
		if dir := parent(e.Path); dir != "" {
			if err := s.root.MkdirAll(dir); err != nil {
				return fmt.Errorf("store: create directory for %q: %w", e.Path, err)
			}
		}
		dirty[parent(e.Stage)] = true
		if err := s.root.RenameNoSync(e.Stage, e.Path); err != nil {
			return fmt.Errorf("store: publish %q: %w", e.Path, err)
		}
	}
	if err := s.syncDirs(dirty); err != nil {
		return err
	}
	if err := s.step(StepApplied); err != nil {
		return err
	}
	// Verify: every journal file now holds exactly its result digest, read
	// back from disk. The result revision was computed from the base
	// manifest that the CAS checked under this same exclusive lease, so
	// together these confirm the bundle is at the journal's result for
	// everything a cooperating writer can change. (A full re-walk would add
	// only a race window against writers that ignore the lease.)
	for _, e := range j.Files {
		if cur, err := HashFile(s.root, e.Path, s.opt.Limits.MaxFileBytes); err != nil || cur != e.ResultSHA {
			return corrupt("file %q did not reach its result state", e.Path)
		}
	}
	if err := s.step(StepVerified); err != nil {
		return err
	}
	if err := s.writeReceipt(j.Receipt); err != nil {
		return err
	}
	if err := s.step(StepReceipted); err != nil {
		return err
	}
	// The receipt is durable: the change is confirmed. Clean-up failures
	// only leave a journal that the next recovery finds already complete.
	s.root.Remove(journalPath)
	s.cleanStage(j.TxID)
	s.pruneReceipts()
	return nil
}

// markDirty marks dir and its ancestors for one fsync each: an ancestor
// may have gained dir itself in this commit or in a crashed run of it
// (MkdirAll fsyncs only parents it creates, and recovery cannot tell).
func markDirty(dirty map[string]bool, dir string) {
	for {
		dirty[dir] = true
		if dir == "" {
			return
		}
		dir = parent(dir)
	}
}

// syncDirs fsyncs each directory in dirty once and empties the set.
func (s *Store) syncDirs(dirty map[string]bool) error {
	for dir := range dirty {
		if err := s.root.SyncDir(dir); err != nil {
			return fmt.Errorf("store: sync directory %q: %w", dir, err)
		}
		delete(dirty, dir)
	}
	return nil
}

func parent(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

func corrupt(format string, args ...any) error {
	return domainerr.New(domainerr.BundleCorrupt, format, args...)
}

// Recover completes or discards an interrupted commit under the exclusive
// lease, waiting for the lease until ctx ends. Writers call it implicitly;
// it is exported for tools and tests. It checks ctx before each journal
// file it inspects or publishes: a cancelled recovery is CANCELLED and
// leaves the durable journal for the next writer to complete.
func (s *Store) Recover(ctx context.Context) error {
	lease, err := s.LockExclusive(ctx)
	if err != nil {
		return err
	}
	defer lease.Release()
	return s.recoverLocked(ctx)
}

func recoveryCancelled() error {
	return domainerr.New(domainerr.Cancelled,
		"recovering an interrupted commit was cancelled; its journal stays and the next write to this bundle completes it. Nothing of this request was written")
}

func (s *Store) recoverLocked(ctx context.Context) error {
	if ctx.Err() != nil {
		return recoveryCancelled()
	}
	pending, err := JournalPending(s.root)
	if err != nil {
		return err
	}
	if !pending {
		s.sweepStale()
		return nil
	}
	raw, err := s.root.ReadFile(journalPath, 64<<20)
	if err != nil {
		return corrupt("the commit journal cannot be read")
	}
	var j journal
	if err := json.Unmarshal(raw, &j); err != nil || j.Format != 1 || j.TxID == "" || !keyPattern.MatchString(j.Receipt.Key) {
		return corrupt("the commit journal is malformed")
	}
	// A journal whose receipt is already durable describes a completed
	// commit (a crash hit between the receipt and the journal's removal):
	// its files may have changed since, so only the clean-up remains.
	if rec, ok, err := s.loadReceipt(j.Receipt.Key); err == nil && ok && sameReceipt(rec, j.Receipt) {
		if err := s.root.Remove(journalPath); err != nil {
			return fmt.Errorf("store: remove completed journal: %w", err)
		}
		s.cleanStage(j.TxID)
		return nil
	}
	for _, e := range j.Files {
		if ctx.Err() != nil {
			return recoveryCancelled()
		}
		// The journal lives inside the bundle and is not trusted: it may
		// only name visible bundle files, never .okf/ or hidden entries
		// such as .git/.
		if !visiblePath(e.Path) {
			return corrupt("the commit journal names an invalid path")
		}
		cur, err := HashFile(s.root, e.Path, s.opt.Limits.MaxFileBytes)
		if err != nil {
			return corrupt("file %q of the interrupted commit cannot be read", e.Path)
		}
		switch cur {
		case e.ResultSHA:
		case e.BaseSHA:
			if e.ResultSHA != "" {
				if !strings.HasPrefix(e.Stage, stageDir+"/"+j.TxID+"/") {
					return corrupt("the commit journal names an invalid stage")
				}
				staged, err := HashFile(s.root, e.Stage, s.opt.Limits.MaxFileBytes)
				if err != nil || staged != e.ResultSHA {
					return corrupt("the staged payload for %q is missing or damaged", e.Path)
				}
			}
		default:
			return corrupt("file %q is in neither its base nor its result state", e.Path)
		}
	}
	return s.finish(ctx, j)
}

// sweepStale removes stage directories and temporary files that a commit
// interrupted before its journal became durable left behind.
func (s *Store) sweepStale() {
	if d, err := s.root.OpenDir(stageDir); err == nil {
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			s.cleanStage(n)
		}
	}
	for _, dir := range []string{Dir, receiptDir} {
		d, err := s.root.OpenDir(dir)
		if err != nil {
			continue
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			if strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-") {
				s.root.Remove(dir + "/" + n)
			}
		}
	}
}

var keyPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// visiblePath reports whether rel is a valid bundle-relative path none of
// whose segments is hidden (which keeps .okf/ and .git/ out of reach).
func visiblePath(rel string) bool {
	parts, err := safefs.SplitRel(rel)
	if err != nil {
		return false
	}
	for _, p := range parts {
		if p[0] == '.' {
			return false
		}
	}
	return true
}

// sameReceipt reports whether a stored receipt is the one a given commit
// made, not an older receipt under the same key.
func sameReceipt(a, b Receipt) bool {
	return a.Key == b.Key && a.Seq == b.Seq && a.CommittedAt == b.CommittedAt &&
		a.ChangeID == b.ChangeID && a.BaseRevision == b.BaseRevision && a.ResultRevision == b.ResultRevision
}

func receiptPath(key string) string { return receiptDir + "/" + key + ".json" }

// loadReceipt returns the receipt stored under key, if any.
func (s *Store) loadReceipt(key string) (Receipt, bool, error) {
	raw, err := s.root.ReadFile(receiptPath(key), 16<<20)
	if err != nil {
		if safefs.IsCode(err, safefs.CodeNotFound) {
			return Receipt{}, false, nil
		}
		return Receipt{}, false, err
	}
	var r Receipt
	if err := json.Unmarshal(raw, &r); err != nil || r.Key != key {
		return Receipt{}, false, corrupt("a stored receipt is malformed")
	}
	return r, true, nil
}

// LookupReceipt returns the receipt stored under key without taking the
// exclusive lease; it writes nothing.
func (s *Store) LookupReceipt(key string) (Receipt, bool, error) {
	if !keyPattern.MatchString(key) {
		return Receipt{}, false, nil
	}
	return s.loadReceipt(key)
}

func (s *Store) writeReceipt(r Receipt) error {
	if err := s.root.MkdirAll(receiptDir); err != nil {
		return fmt.Errorf("store: create receipts: %w", err)
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("store: encode receipt: %w", err)
	}
	if err := s.root.WriteFileSynced(receiptPath(r.Key), append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("store: write receipt: %w", err)
	}
	return nil
}

// pruneReceipts keeps the newest Retention receipts. It runs only once the
// count exceeds the bound by a tenth, so a commit rarely pays for it.
func (s *Store) pruneReceipts() {
	d, err := s.root.OpenDir(receiptDir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	if len(names) <= s.opt.Retention+s.opt.Retention/10 {
		return
	}
	type aged struct {
		name string
		ns   int64
	}
	var all []aged
	for _, n := range names {
		if st, err := s.root.Lstat(receiptDir + "/" + n); err == nil {
			all = append(all, aged{n, st.Mtim.Nano()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ns < all[j].ns })
	for _, a := range all[:max(0, len(all)-s.opt.Retention)] {
		s.root.Remove(receiptDir + "/" + a.name)
	}
}
