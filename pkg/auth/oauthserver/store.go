package oauthserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ory/fosite"

	"github.com/notebridge/notebridge/pkg/core/scope"
	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
)

// Store is the authorization server's durable state: registered clients,
// authorization codes, PKCE challenges, and the access and refresh tokens
// of every grant. Tokens are keyed by their HMAC signature, never stored
// themselves. Every change rewrites one JSON file in the state directory
// atomically (temporary file, fsync, rename; mode 0600 in a 0700
// directory), so the state survives a restart and a revocation is on disk
// before it is answered. The file is shared with the operator's commands
// in other processes under a file lock (storesync.go). It implements the
// storage interfaces fosite's authorization code, PKCE, refresh and
// revocation handlers need.
type Store struct {
	path string
	now  func() time.Time
	// audience is what every client may be granted: our one resource.
	audience []string
	// mu serialises this process; lock adds the cross-process file lock.
	mu sync.Mutex
	st state
	// seen is the state file as last read or written here: when it
	// differs, another process (the operator's CLI) changed it.
	seen os.FileInfo
}

// state is the file's content.
type state struct {
	Version int                     `json:"version"`
	Clients map[string]clientRecord `json:"clients"`
	Codes   map[string]tokenRecord  `json:"codes"`
	PKCE    map[string]tokenRecord  `json:"pkce"`
	Access  map[string]tokenRecord  `json:"access"`
	Refresh map[string]tokenRecord  `json:"refresh"`
	Grants  map[string]grantRecord  `json:"grants,omitempty"`
	// Revoked holds the grants the operator revoked, until their last
	// token would have expired: no new token is stored for them.
	Revoked map[string]time.Time `json:"revoked,omitempty"`
}

// clientRecord is a registered client. SecretHash is a SHA-256 digest
// (hashSecret) or, in state files written before, a bcrypt hash.
type clientRecord struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	SecretHash    []byte    `json:"secret_hash,omitempty"`
	RedirectURIs  []string  `json:"redirect_uris"`
	GrantTypes    []string  `json:"grant_types"`
	Scopes        []string  `json:"scopes"`
	AuthMethod    string    `json:"token_endpoint_auth_method"`
	RegisteredAt  time.Time `json:"registered_at"`
	RegisteredVia string    `json:"registered_via"`
}

// tokenRecord is one stored request: the grant a code or token stands for.
type tokenRecord struct {
	RequestID         string                `json:"request_id"`
	ClientID          string                `json:"client_id"`
	RequestedAt       time.Time             `json:"requested_at"`
	RequestedScopes   []string              `json:"requested_scopes"`
	GrantedScopes     []string              `json:"granted_scopes"`
	RequestedAudience []string              `json:"requested_audience"`
	GrantedAudience   []string              `json:"granted_audience"`
	Form              map[string]string     `json:"form,omitempty"`
	Session           fosite.DefaultSession `json:"session"`
	Active            bool                  `json:"active"`
	AccessSignature   string                `json:"access_signature,omitempty"`
}

// storedFormKeys are the only request parameters kept: what the token
// endpoint compares later. Codes, states and verifiers are never stored.
var storedFormKeys = []string{"redirect_uri", "code_challenge", "code_challenge_method"}

const stateVersion = 1

// OpenStore loads the state file at path, or starts empty when it does not
// exist. Its directory is created 0700. resource is the one audience
// clients may be granted.
func OpenStore(path, resource string, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("oauth state directory: %w", err)
	}
	s := &Store{path: path, now: now, audience: []string{resource}, st: emptyState()}
	if err := s.refresh(); err != nil {
		return nil, err
	}
	return s, nil
}

func emptyState() state {
	return state{Version: stateVersion, Clients: map[string]clientRecord{}, Codes: map[string]tokenRecord{},
		PKCE: map[string]tokenRecord{}, Access: map[string]tokenRecord{}, Refresh: map[string]tokenRecord{},
		Grants: map[string]grantRecord{}, Revoked: map[string]time.Time{}}
}

// commit prunes what has expired and writes the state atomically. The
// caller holds mu. On failure the in-memory change stays, but the caller
// reports the error, so the client sees a server error.
func (s *Store) commit() error {
	s.prune()
	raw, err := json.Marshal(s.st)
	if err != nil {
		return fmt.Errorf("encode oauth state: %w", err)
	}
	if err := atomicfile.Write(s.path, raw, time.Time{}); err != nil {
		return fmt.Errorf("write oauth state: %w", err)
	}
	if fi, err := os.Stat(s.path); err == nil {
		s.seen = fi
	}
	return nil
}

// prune drops codes and tokens whose lifetime has passed. A used refresh
// token is kept until it expires, so its reuse is still recognised.
func (s *Store) prune() {
	now := s.now()
	drop := func(m map[string]tokenRecord, tt fosite.TokenType) {
		for k, r := range m {
			if r.expired(tt, now) {
				delete(m, k)
			}
		}
	}
	drop(s.st.Codes, fosite.AuthorizeCode)
	drop(s.st.PKCE, fosite.AuthorizeCode)
	drop(s.st.Access, fosite.AccessToken)
	drop(s.st.Refresh, fosite.RefreshToken)
	s.pruneGrants()
}

// record converts a fosite request for storage.
func record(r fosite.Requester) (tokenRecord, error) {
	sess, ok := r.GetSession().(*fosite.DefaultSession)
	if !ok {
		return tokenRecord{}, errors.New("oauth: unexpected session type")
	}
	form := map[string]string{}
	for _, k := range storedFormKeys {
		if v := r.GetRequestForm().Get(k); v != "" {
			form[k] = v
		}
	}
	c := *sess
	c.ExpiresAt = map[fosite.TokenType]time.Time{}
	for k, v := range sess.ExpiresAt {
		c.ExpiresAt[k] = v
	}
	return tokenRecord{
		RequestID: r.GetID(), ClientID: r.GetClient().GetID(), RequestedAt: r.GetRequestedAt(),
		RequestedScopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(),
		RequestedAudience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: form, Session: c, Active: true,
	}, nil
}

// request rebuilds a fosite request; the client must still be registered.
// The stored session is merged into into when it is a *DefaultSession:
// fosite expects the storage to hydrate the session it passes, and checks
// a code's expiry on it.
func (s *Store) request(rec tokenRecord, into fosite.Session) (*fosite.Request, error) {
	cr, ok := s.st.Clients[rec.ClientID]
	if !ok {
		return nil, fosite.ErrNotFound
	}
	form := url.Values{}
	for k, v := range rec.Form {
		form.Set(k, v)
	}
	sess, ok := into.(*fosite.DefaultSession)
	if !ok || sess == nil {
		sess = &fosite.DefaultSession{}
	}
	hydrate(sess, rec.Session)
	return &fosite.Request{
		ID: rec.RequestID, RequestedAt: rec.RequestedAt, Client: cr.client(s.audience),
		RequestedScope: rec.RequestedScopes, GrantedScope: rec.GrantedScopes,
		RequestedAudience: rec.RequestedAudience, GrantedAudience: rec.GrantedAudience,
		Form: form, Session: sess,
	}, nil
}

// hydrate merges a stored session into sess as decoding it would: stored
// expiries overwrite, expiries set since (the new tokens') stay.
func hydrate(sess *fosite.DefaultSession, stored fosite.DefaultSession) {
	if sess.ExpiresAt == nil {
		sess.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	for k, v := range stored.ExpiresAt {
		sess.ExpiresAt[k] = v
	}
	sess.Username, sess.Subject = stored.Username, stored.Subject
	if stored.Extra != nil {
		sess.Extra = stored.Extra // the grant's notebooks (notebooks.go)
	}
}

func (s *Store) create(m func(*state) map[string]tokenRecord, key string, r fosite.Requester, accessSig string, grant bool) error {
	rec, err := record(r)
	if err != nil {
		return err
	}
	rec.AccessSignature = accessSig
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if grant {
		// A refresh that read its grant before the operator revoked it
		// cannot bring the grant back.
		if _, revoked := s.st.Revoked[rec.RequestID]; revoked {
			return fosite.ErrInactiveToken
		}
		s.noteGrant(rec)
	}
	m(&s.st)[key] = rec
	return s.commit()
}

func (s *Store) get(m func(*state) map[string]tokenRecord, key string, into fosite.Session, inactive error) (fosite.Requester, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, ok := m(&s.st)[key]
	if !ok {
		return nil, fosite.ErrNotFound
	}
	req, err := s.request(rec, into)
	if err != nil {
		return nil, err
	}
	if !rec.Active {
		return req, inactive
	}
	return req, nil
}

func (s *Store) remove(m func(*state) map[string]tokenRecord, key string) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := m(&s.st)[key]; !ok {
		return nil
	}
	delete(m(&s.st), key)
	return s.commit()
}

// CreateAuthorizeCodeSession implements fosite's AuthorizeCodeStorage.
func (s *Store) CreateAuthorizeCodeSession(_ context.Context, sig string, r fosite.Requester) error {
	return s.create(codes, sig, r, "", false)
}

// GetAuthorizeCodeSession returns ErrInvalidatedAuthorizeCode, with the
// request, for a code already used: fosite then revokes its tokens.
func (s *Store) GetAuthorizeCodeSession(_ context.Context, sig string, into fosite.Session) (fosite.Requester, error) {
	return s.get(codes, sig, into, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession marks a code used.
func (s *Store) InvalidateAuthorizeCodeSession(_ context.Context, sig string) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	rec, ok := s.st.Codes[sig]
	if !ok {
		return fosite.ErrNotFound
	}
	rec.Active = false
	s.st.Codes[sig] = rec
	return s.commit()
}

// CreatePKCERequestSession implements fosite's PKCERequestStorage.
func (s *Store) CreatePKCERequestSession(_ context.Context, sig string, r fosite.Requester) error {
	return s.create(pkces, sig, r, "", false)
}

// GetPKCERequestSession implements fosite's PKCERequestStorage.
func (s *Store) GetPKCERequestSession(_ context.Context, sig string, into fosite.Session) (fosite.Requester, error) {
	return s.get(pkces, sig, into, fosite.ErrNotFound)
}

// DeletePKCERequestSession implements fosite's PKCERequestStorage.
func (s *Store) DeletePKCERequestSession(_ context.Context, sig string) error {
	return s.remove(pkces, sig)
}

// CreateAccessTokenSession implements fosite's AccessTokenStorage.
func (s *Store) CreateAccessTokenSession(_ context.Context, sig string, r fosite.Requester) error {
	return s.create(accesses, sig, r, "", true)
}

// GetAccessTokenSession implements fosite's AccessTokenStorage.
func (s *Store) GetAccessTokenSession(_ context.Context, sig string, into fosite.Session) (fosite.Requester, error) {
	return s.get(accesses, sig, into, fosite.ErrNotFound)
}

// DeleteAccessTokenSession implements fosite's AccessTokenStorage.
func (s *Store) DeleteAccessTokenSession(_ context.Context, sig string) error {
	return s.remove(accesses, sig)
}

// CreateRefreshTokenSession implements fosite's RefreshTokenStorage.
func (s *Store) CreateRefreshTokenSession(_ context.Context, sig, accessSig string, r fosite.Requester) error {
	return s.create(refreshes, sig, r, accessSig, true)
}

// GetRefreshTokenSession returns ErrInactiveToken, with the request, for a
// refresh token already rotated out: fosite then revokes the whole grant.
func (s *Store) GetRefreshTokenSession(_ context.Context, sig string, into fosite.Session) (fosite.Requester, error) {
	return s.get(refreshes, sig, into, fosite.ErrInactiveToken)
}

// DeleteRefreshTokenSession implements fosite's RefreshTokenStorage.
func (s *Store) DeleteRefreshTokenSession(_ context.Context, sig string) error {
	return s.remove(refreshes, sig)
}

// RotateRefreshToken retires every refresh token of the grant (kept,
// inactive, to detect reuse) and deletes its access tokens.
func (s *Store) RotateRefreshToken(ctx context.Context, requestID, _ string) error {
	return s.revokeGrant(requestID, false)
}

// RevokeRefreshToken implements fosite's TokenRevocationStorage.
func (s *Store) RevokeRefreshToken(_ context.Context, requestID string) error {
	return s.revokeGrant(requestID, false)
}

// RevokeAccessToken implements fosite's TokenRevocationStorage.
func (s *Store) RevokeAccessToken(_ context.Context, requestID string) error {
	return s.revokeGrant(requestID, true)
}

// revokeGrant deactivates the refresh tokens of a grant, or, with
// accessOnly, deletes only its access tokens. Both delete access tokens
// when refresh tokens go, so revocation takes effect at once.
func (s *Store) revokeGrant(requestID string, accessOnly bool) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	changed := false
	for k, r := range s.st.Access {
		if r.RequestID == requestID {
			delete(s.st.Access, k)
			changed = true
		}
	}
	if !accessOnly {
		for k, r := range s.st.Refresh {
			if r.RequestID == requestID && r.Active {
				r.Active = false
				s.st.Refresh[k] = r
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	return s.commit()
}

// GetClient implements fosite's ClientManager.
func (s *Store) GetClient(_ context.Context, id string) (fosite.Client, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, ok := s.st.Clients[id]
	if !ok {
		return nil, fosite.ErrNotFound
	}
	return c.client(s.audience), nil
}

// ClientAssertionJWTValid: JWT client assertions are not supported, so no
// assertion is ever valid.
func (s *Store) ClientAssertionJWTValid(context.Context, string) error {
	return fosite.ErrJTIKnown
}

// SetClientAssertionJWT: JWT client assertions are not supported.
func (s *Store) SetClientAssertionJWT(context.Context, string, time.Time) error {
	return errors.New("oauth: client assertions are not supported")
}

// addClient registers c, first dropping the oldest clients without a live
// grant while more than max are registered. It fails when every client
// holds a live grant.
func (s *Store) addClient(c clientRecord, max int) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if len(s.st.Clients) >= max {
		live := map[string]bool{}
		for _, m := range []map[string]tokenRecord{s.st.Codes, s.st.Access, s.st.Refresh} {
			for _, r := range m {
				if r.Active {
					live[r.ClientID] = true
				}
			}
		}
		var idle []clientRecord
		for _, cr := range s.st.Clients {
			if !live[cr.ID] {
				idle = append(idle, cr)
			}
		}
		sort.Slice(idle, func(i, j int) bool { return idle[i].RegisteredAt.Before(idle[j].RegisteredAt) })
		for len(s.st.Clients) >= max && len(idle) > 0 {
			delete(s.st.Clients, idle[0].ID)
			idle = idle[1:]
		}
		if len(s.st.Clients) >= max {
			return errTooManyClients
		}
	}
	s.st.Clients[c.ID] = c
	return s.commit()
}

var errTooManyClients = errors.New("too many registered clients")

// client is the fosite view of a registered client: every client may ask
// only for our scopes and only for our resource (set by the server).
func (c clientRecord) client(audience []string) fosite.Client {
	return &fosite.DefaultClient{
		ID: c.ID, Secret: c.SecretHash, RedirectURIs: c.RedirectURIs, GrantTypes: c.GrantTypes,
		ResponseTypes: []string{"code"}, Scopes: c.Scopes, Audience: audience, Public: c.AuthMethod == authNone,
	}
}

// lookupClient returns a registered client.
func (s *Store) lookupClient(id string) (clientRecord, bool) {
	unlock, err := s.lock()
	if err != nil {
		return clientRecord{}, false
	}
	defer unlock()
	c, ok := s.st.Clients[id]
	return c, ok
}

// grantScopes returns the scopes held by the grant of an active refresh
// token.
func (s *Store) grantScopes(refreshSig string) (scope.Set, bool) {
	unlock, err := s.lock()
	if err != nil {
		return scope.Set{}, false
	}
	defer unlock()
	rec, ok := s.st.Refresh[refreshSig]
	if !ok || !rec.Active {
		return scope.Set{}, false
	}
	set, err := scope.Parse(strings.Join(rec.GrantedScopes, " "))
	return set, err == nil
}
