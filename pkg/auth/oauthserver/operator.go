package oauthserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/ory/fosite"
)

// The operator's view of the authorization server's state (notebridge
// oauth clients|grants|revoke|rotate-secret), safe to run while the server
// runs: see storesync.go. Nothing here returns a token, a code, a
// signature or a secret hash.

// statePath and secretPath are the files of the authorization server in
// a state directory.
func statePath(stateDir string) string  { return filepath.Join(stateDir, "oauth", "state.json") }
func secretPath(stateDir string) string { return filepath.Join(stateDir, "oauth", "token-secret") }

// ErrNoState: the state directory holds no authorization server state.
var ErrNoState = errors.New("no OAuth state in this state directory (no client has registered yet)")

// ClientInfo describes a registered client.
type ClientInfo struct {
	ID            string
	Name          string
	RedirectURIs  []string
	Scopes        []string
	AuthMethod    string
	RegisteredAt  time.Time
	RegisteredVia string
	// Grants is the number of its live grants.
	Grants int
}

// GrantInfo describes a live grant: one owner approval, kept across
// refreshes, until it is revoked or its refresh token expires.
type GrantInfo struct {
	ID         string
	ClientID   string
	ClientName string
	Scopes     []string
	// Notebooks names the notebooks the owner shared on the consent page.
	Notebooks string
	Created   time.Time
	// LastUsed is when one of its access tokens last admitted a request,
	// to the minute; zero when never (or before this was recorded).
	LastUsed time.Time
}

// Operator reads and changes the authorization server's state for the
// operator's commands.
type Operator struct {
	stateDir string
	store    *Store
}

// OpenOperator opens the state in stateDir; ErrNoState when there is none.
func OpenOperator(stateDir string) (*Operator, error) {
	if _, err := os.Stat(statePath(stateDir)); errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoState
	}
	s, err := OpenStore(statePath(stateDir), "", nil)
	if err != nil {
		return nil, err
	}
	return &Operator{stateDir: stateDir, store: s}, nil
}

// Clients lists the registered clients, oldest first.
func (o *Operator) Clients() ([]ClientInfo, error) {
	unlock, err := o.store.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	grants := o.store.liveGrants()
	out := make([]ClientInfo, 0, len(o.store.st.Clients))
	for _, c := range o.store.st.Clients {
		n := 0
		for _, g := range grants {
			if g.ClientID == c.ID {
				n++
			}
		}
		out = append(out, ClientInfo{ID: c.ID, Name: c.Name, RedirectURIs: slices.Clone(c.RedirectURIs), Scopes: slices.Clone(c.Scopes),
			AuthMethod: c.AuthMethod, RegisteredAt: c.RegisteredAt, RegisteredVia: c.RegisteredVia, Grants: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].RegisteredAt.Equal(out[j].RegisteredAt) {
			return out[i].RegisteredAt.Before(out[j].RegisteredAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Grants lists the live grants, oldest first.
func (o *Operator) Grants() ([]GrantInfo, error) { return o.store.Grants() }

// Grants lists the live grants, oldest first, each with its last use.
func (s *Store) Grants() ([]GrantInfo, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.liveGrants(), nil
}

// liveGrants are the grants holding a token that can still be used: an
// access token or an active refresh token, each within its own lifetime
// (the code's shorter one, kept in the same session, does not count). The
// caller holds the lock.
func (s *Store) liveGrants() []GrantInfo {
	now := s.now()
	byID := map[string]*GrantInfo{}
	for tt, m := range map[fosite.TokenType]map[string]tokenRecord{fosite.AccessToken: s.st.Access, fosite.RefreshToken: s.st.Refresh} {
		for _, r := range m {
			if !r.Active || r.expired(tt, now) {
				continue
			}
			g, ok := byID[r.RequestID]
			if !ok {
				g = &GrantInfo{ID: r.RequestID, ClientID: r.ClientID, Scopes: slices.Clone(r.GrantedScopes),
					Notebooks: grantNames(r.Session), Created: r.RequestedAt.UTC()}
				byID[r.RequestID] = g
			}
			if r.RequestedAt.Before(g.Created) {
				g.Created = r.RequestedAt.UTC()
			}
		}
	}
	out := make([]GrantInfo, 0, len(byID))
	for id, g := range byID {
		if rec, ok := s.st.Grants[id]; ok {
			g.Created, g.LastUsed = rec.Created, rec.LastUsed
		}
		g.ClientName = s.st.Clients[g.ClientID].Name
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// expired reports whether the lifetime of r, a stored code or token of
// type tt, has passed at now.
func (r tokenRecord) expired(tt fosite.TokenType, now time.Time) bool {
	exp := r.Session.ExpiresAt[tt]
	return !exp.IsZero() && now.After(exp)
}

// Revoke ends a grant (every token of it; the next request with its access
// token is refused) or, given a client ID, removes the client with all its
// grants, codes and tokens (it must register and be approved again). It
// reports which of the two id named.
func (o *Operator) Revoke(id string) (string, error) {
	s := o.store
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	match := func(r tokenRecord) bool { return r.RequestID == id }
	kind := "grant"
	if _, ok := s.st.Clients[id]; ok {
		kind = "client"
		match = func(r tokenRecord) bool { return r.ClientID == id }
		delete(s.st.Clients, id)
	} else if !s.knownGrant(id) {
		return "", fmt.Errorf("no client or live grant %q (see notebridge oauth clients and oauth grants)", id)
	}
	// Every grant revoked here stays marked until its last token would
	// have expired, so a refresh already under way cannot store new ones.
	until := s.now().Add(time.Hour)
	revoked := map[string]bool{}
	for _, m := range s.st.tokenMaps() {
		for _, r := range m {
			if match(r) {
				revoked[r.RequestID] = true
				for _, exp := range r.Session.ExpiresAt {
					if exp.After(until) {
						until = exp
					}
				}
			}
		}
	}
	if kind == "grant" {
		// Marked even with no token left: a refresh under way has retired
		// the old refresh token and not yet stored the new ones.
		revoked[id] = true
	}
	for id := range revoked {
		s.st.Revoked[id] = until
	}
	for _, m := range []map[string]tokenRecord{s.st.Codes, s.st.PKCE, s.st.Access} {
		for k, r := range m {
			if match(r) {
				delete(m, k)
			}
		}
	}
	for k, r := range s.st.Refresh {
		switch {
		case kind == "client" && match(r):
			delete(s.st.Refresh, k)
		case match(r):
			r.Active = false // kept until it expires: its reuse is still recognised
			s.st.Refresh[k] = r
		}
	}
	return kind, s.commit()
}

// knownGrant reports whether id names a grant: a recorded grant or the
// request of any stored code or token, active or not (a refresh under way
// has retired its old refresh token before storing the new ones). The
// caller holds the lock.
func (s *Store) knownGrant(id string) bool {
	if _, ok := s.st.Grants[id]; ok {
		return true
	}
	for _, m := range s.st.tokenMaps() {
		for _, r := range m {
			if r.RequestID == id {
				return true
			}
		}
	}
	return false
}
