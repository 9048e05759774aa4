package oauthserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/filelock"
)

// The state file is shared by the running server and the operator's
// commands (notebridge oauth revoke, rotate-secret): every read and every
// read-modify-write holds an exclusive flock on <state>.lock and first
// re-reads the file when another process replaced it (its inode, size or
// modification time changed), so a revocation made by the CLI is seen by
// the server's next request and is never overwritten by its next save.

// lockWait bounds the wait for the other process's lock.
const lockWait = 10 * time.Second

// lock takes the process mutex and the file lock, then brings the state up
// to date with the file. The returned function releases both.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	release, err := filelock.Lock(ctx, s.path+".lock")
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("lock oauth state: %w", err)
	}
	if err := s.refresh(); err != nil {
		release()
		s.mu.Unlock()
		return nil, err
	}
	return func() { release(); s.mu.Unlock() }, nil
}

// refresh re-reads the state file when it is not the one last seen. A
// missing file is an empty state.
func (s *Store) refresh() error {
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if s.seen != nil { // removed by the operator: start over
			s.st, s.seen = emptyState(), nil
		}
		return nil
	case err != nil:
		return fmt.Errorf("read oauth state: %w", err)
	}
	if s.seen != nil && os.SameFile(s.seen, fi) && s.seen.Size() == fi.Size() && s.seen.ModTime().Equal(fi.ModTime()) {
		return nil
	}
	raw, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("read oauth state: %w", err)
	}
	var st state
	if err := json.Unmarshal(raw, &st); err != nil || st.Version != stateVersion {
		return fmt.Errorf("oauth state %s is not a version-%d state file; move it away to start over", s.path, stateVersion)
	}
	// Into an empty state, so no map of s.st is nil.
	s.st = emptyState()
	maps.Copy(s.st.Clients, st.Clients)
	src := st.tokenMaps()
	for i, m := range s.st.tokenMaps() {
		maps.Copy(m, src[i])
	}
	maps.Copy(s.st.Grants, st.Grants)
	maps.Copy(s.st.Revoked, st.Revoked)
	s.seen = fi
	return nil
}

// tokenMaps are the maps of every stored code and token of st.
func (st *state) tokenMaps() []map[string]tokenRecord {
	return []map[string]tokenRecord{st.Codes, st.PKCE, st.Access, st.Refresh}
}

// The token maps of a state, for the generic store operations.
func codes(st *state) map[string]tokenRecord     { return st.Codes }
func pkces(st *state) map[string]tokenRecord     { return st.PKCE }
func accesses(st *state) map[string]tokenRecord  { return st.Access }
func refreshes(st *state) map[string]tokenRecord { return st.Refresh }

// grantRecord is what the operator sees of a grant besides its tokens:
// when it was made and when one of its access tokens last admitted a
// request (to the minute: lastUsedStep).
type grantRecord struct {
	ClientID string    `json:"client_id"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitempty"`
}

// lastUsedStep is how stale a grant's last use may be before it is written
// again, so the state file is not rewritten on every request.
const lastUsedStep = time.Minute

// noteGrant records the grant of a new access or refresh token.
func (s *Store) noteGrant(rec tokenRecord) {
	if _, ok := s.st.Grants[rec.RequestID]; !ok {
		s.st.Grants[rec.RequestID] = grantRecord{ClientID: rec.ClientID, Created: s.now().UTC()}
	}
}

// pruneGrants drops the records of grants without any token left, and
// the marks of revoked grants whose tokens would all have expired.
func (s *Store) pruneGrants() {
	now := s.now()
	for id, until := range s.st.Revoked {
		if now.After(until) {
			delete(s.st.Revoked, id)
		}
	}
	held := map[string]bool{}
	for _, m := range []map[string]tokenRecord{s.st.Access, s.st.Refresh} {
		for _, r := range m {
			held[r.RequestID] = true
		}
	}
	for id := range s.st.Grants {
		if !held[id] {
			delete(s.st.Grants, id)
		}
	}
}

// touchGrant records that the grant admitted a request now, unless its
// last use is already recorded within lastUsedStep. The common case, a
// use recorded within the step, is decided from memory, without the file
// lock: only this process writes a grant's last use.
func (s *Store) touchGrant(id string) error {
	s.mu.Lock()
	g, ok := s.st.Grants[id]
	recent := ok && s.now().UTC().Sub(g.LastUsed) < lastUsedStep
	s.mu.Unlock()
	if recent {
		return nil
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	g, ok = s.st.Grants[id]
	now := s.now().UTC()
	if !ok || now.Sub(g.LastUsed) < lastUsedStep {
		return nil
	}
	g.LastUsed = now.Truncate(time.Second)
	s.st.Grants[id] = g
	return s.commit()
}
