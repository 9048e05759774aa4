package oauthserver

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/token/hmac"
)

func openOperator(t *testing.T, dir string) *Operator {
	t.Helper()
	o, err := OpenOperator(dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// fileID is what tells one version of a file from the next.
func fileID(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// TestOperatorRevokeGrantWhileServing: a grant revoked by the operator's
// process is refused on the server's next check, and the server's next
// save (a new registration) does not bring it back.
func TestOperatorRevokeGrantWhileServing(t *testing.T) {
	a := newASTest(t, "")
	client, access, refreshTok := a.tokens()
	_, keep, _ := a.tokens()
	o := openOperator(t, a.dir)
	grants, err := o.Grants()
	if err != nil || len(grants) != 2 {
		t.Fatalf("grants: %v %+v", err, grants)
	}
	var target GrantInfo
	for _, g := range grants {
		if g.ClientID == client {
			target = g
		}
	}
	if kind, err := o.Revoke(target.ID); err != nil || kind != "grant" {
		t.Fatalf("revoke: %q %v", kind, err)
	}
	if a.valid(access) {
		t.Fatal("the revoked grant's access token still verifies in the running server")
	}
	if !a.valid(keep) {
		t.Fatal("another grant was revoked")
	}
	a.publicClient() // the server saves its state
	if a.valid(access) {
		t.Fatal("the server's save brought the revoked grant back")
	}
	if st, out := a.token(refresh(client, refreshTok)); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("refresh of a revoked grant: %d %v", st, out)
	}
	if grants, _ := o.Grants(); len(grants) != 1 || grants[0].ID == target.ID {
		t.Fatalf("grants after revoke: %+v", grants)
	}
}

// TestOperatorRevokeClient: revoking a client removes it with its tokens,
// in the running server too; other clients keep theirs.
func TestOperatorRevokeClient(t *testing.T) {
	a := newASTest(t, "")
	client, access, refreshTok := a.tokens()
	other, keep, _ := a.tokens()
	o := openOperator(t, a.dir)
	if kind, err := o.Revoke(client); err != nil || kind != "client" {
		t.Fatalf("revoke: %q %v", kind, err)
	}
	if a.valid(access) || !a.valid(keep) {
		t.Fatal("revoking a client must end its tokens, only its")
	}
	if st, out := a.token(refresh(client, refreshTok)); st < 400 || out["error"] == nil {
		t.Fatalf("refresh for a removed client: %d %v", st, out)
	}
	clients, err := o.Clients()
	if err != nil || len(clients) != 1 || clients[0].ID != other || clients[0].Grants != 1 {
		t.Fatalf("clients: %v %+v", err, clients)
	}
}

// TestOperatorRevokeUnknown: an unknown id is an error and changes
// nothing.
func TestOperatorRevokeUnknown(t *testing.T) {
	a := newASTest(t, "")
	_, access, _ := a.tokens()
	before := fileID(t, statePath(a.dir))
	o := openOperator(t, a.dir)
	if _, err := o.Revoke("no-such-id"); err == nil || !strings.Contains(err.Error(), "no client or live grant") {
		t.Fatalf("revoke of an unknown id: %v", err)
	}
	if !sameVersion(before, fileID(t, statePath(a.dir))) || !a.valid(access) {
		t.Fatal("a refused revoke changed the state")
	}
	if _, err := OpenOperator(t.TempDir()); !errors.Is(err, ErrNoState) {
		t.Fatalf("an empty state directory: %v", err)
	}
}

// TestOperatorRotateSecret: after a rotation no token issued before
// verifies or refreshes, in the running server; new ones are issued with
// the new secret and verify.
func TestOperatorRotateSecret(t *testing.T) {
	a := newASTest(t, "")
	client, access, refreshTok := a.tokens()
	oldSecret, _ := os.ReadFile(secretPath(a.dir))
	if err := openOperator(t, a.dir).RotateSecret(); err != nil {
		t.Fatal(err)
	}
	newSecret, _ := os.ReadFile(secretPath(a.dir))
	if len(newSecret) != 32 || string(newSecret) == string(oldSecret) {
		t.Fatal("the secret was not replaced")
	}
	if fi := fileID(t, secretPath(a.dir)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret mode %v", fi.Mode())
	}
	if a.valid(access) {
		t.Fatal("an access token from before the rotation verifies")
	}
	if st, _ := a.token(refresh(client, refreshTok)); st != 400 && st != 401 {
		t.Fatalf("a refresh token from before the rotation: %d", st)
	}
	if c := a.counts(); c[1] != 0 || c[2] != 0 || c[3] != 0 || c[0] != 1 {
		t.Fatalf("after rotation clients, codes, access, refresh: %v", c)
	}
	_, fresh, _ := a.tokens()
	if !a.valid(fresh) {
		t.Fatal("a token issued after the rotation does not verify")
	}
	signedWith := func(secret []byte) bool {
		return (&hmac.HMACStrategy{Config: &fosite.Config{GlobalSecret: secret}}).Validate(t.Context(), strings.TrimPrefix(fresh, "ory_at_")) == nil
	}
	if !signedWith(newSecret) || signedWith(oldSecret) {
		t.Fatal("the running server did not sign with the new secret")
	}
}

// TestGrantsListing: grants show client, scopes, creation and last use,
// recorded at most once a minute; the listing holds no token and no
// signature, the state file no token.
func TestGrantsListing(t *testing.T) {
	start, ahead := time.Now().UTC(), atomic.Int64{} // the server's clock, moved by the test
	now := func() time.Time { return start.Add(time.Duration(ahead.Load())) }
	a := newASTestWith(t, "", Config{RegisterRate: "1000-M", TokenRate: "1000-M", AuthorizeRate: "1000-M", Now: now})
	client, access, refreshTok := a.tokens()
	o := openOperator(t, a.dir)
	grants, _ := o.Grants()
	if len(grants) != 1 || grants[0].ClientID != client || grants[0].ClientName != "Test client" ||
		strings.Join(grants[0].Scopes, " ") != "notes:read okf:read" || grants[0].Created.IsZero() || !grants[0].LastUsed.IsZero() {
		t.Fatalf("grant %+v", grants)
	}
	if !a.valid(access) {
		t.Fatal("token")
	}
	first := fileID(t, statePath(a.dir))
	grants, _ = o.Grants()
	if !grants[0].LastUsed.Equal(now().Truncate(time.Second)) {
		t.Fatalf("last used %v, want %v", grants[0].LastUsed, now())
	}
	ahead.Add(int64(30 * time.Second))
	a.valid(access)
	if !sameVersion(first, fileID(t, statePath(a.dir))) {
		t.Fatal("a second use within the minute rewrote the state file")
	}
	ahead.Add(int64(31 * time.Second))
	a.valid(access)
	if grants, _ = o.Grants(); !grants[0].LastUsed.Equal(now().Truncate(time.Second)) {
		t.Fatalf("last used after a minute: %v", grants[0].LastUsed)
	}
	listing, _ := json.Marshal(grants)
	raw, _ := os.ReadFile(statePath(a.dir))
	for _, tok := range []string{access, refreshTok} {
		key, sig, _ := strings.Cut(tok, ".")
		if strings.Contains(string(listing), key) || strings.Contains(string(listing), sig) || strings.Contains(string(raw), key) {
			t.Fatal("a token or its signature is in the listing, or a token in the state file")
		}
	}
	if _, err := os.Stat(filepath.Join(a.dir, "oauth", "state.json.lock")); err != nil {
		t.Fatalf("lock file: %v", err)
	}
}

// TestRevokedGrantStaysRevoked: a refresh that read its grant before the
// operator revoked it (fosite's steps are separate store calls) cannot
// store new tokens for it afterwards.
func TestRevokedGrantStaysRevoked(t *testing.T) {
	a := newASTest(t, "")
	a.tokens()
	s, inFlight := a.as.store, refreshInFlight(t, a)
	if _, err := openOperator(t, a.dir).Revoke(inFlight.GetID()); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAccessTokenSession(t.Context(), "late-access-signature", inFlight); !errors.Is(err, fosite.ErrInactiveToken) {
		t.Fatalf("a late access token for the revoked grant: %v", err)
	}
	if err := s.CreateRefreshTokenSession(t.Context(), "late-refresh-signature", "late-access-signature", inFlight); !errors.Is(err, fosite.ErrInactiveToken) {
		t.Fatalf("a late refresh token for the revoked grant: %v", err)
	}
	if c := a.counts(); c != [4]int{1, 0, 0, 0} {
		t.Fatalf("clients, codes, access and active refresh tokens after the late refresh: %v", c)
	}
	if grants, _ := openOperator(t, a.dir).Grants(); len(grants) != 0 {
		t.Fatalf("the revoked grant is live again: %+v", grants)
	}
}

// refreshInFlight is the request of a's only refresh token, as fosite
// reads it at the start of a refresh.
func refreshInFlight(t *testing.T, a *asTest) *fosite.Request {
	t.Helper()
	s := a.as.store
	s.mu.Lock()
	defer s.mu.Unlock()
	var inFlight *fosite.Request
	for _, rec := range s.st.Refresh {
		req, err := s.request(rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		inFlight = req
	}
	if inFlight == nil {
		t.Fatal("no refresh token stored")
	}
	return inFlight
}

// TestRevokeDuringRefresh: fosite's refresh retires the old refresh token
// before it stores the new tokens; a revocation in between must still
// name the grant and mark it, so the refresh cannot store new tokens.
func TestRevokeDuringRefresh(t *testing.T) {
	a := newASTest(t, "")
	a.tokens()
	s, inFlight := a.as.store, refreshInFlight(t, a)
	ctx := t.Context()
	if err := s.RotateRefreshToken(ctx, inFlight.GetID(), ""); err != nil {
		t.Fatal(err)
	}
	if kind, err := openOperator(t, a.dir).Revoke(inFlight.GetID()); err != nil || kind != "grant" {
		t.Fatalf("revoke during a refresh: kind %q, err %v; want a grant", kind, err)
	}
	if err := s.CreateAccessTokenSession(ctx, "late-access", inFlight); !errors.Is(err, fosite.ErrInactiveToken) {
		t.Fatalf("a late access token for the revoked grant: %v", err)
	}
	if grants, err := openOperator(t, a.dir).Grants(); err != nil || len(grants) != 0 {
		t.Fatalf("grants after the revoked refresh: %v, %v; want none", grants, err)
	}
}

// TestGrantListedWhileItsTokensWork: a grant stays listed, with its last
// use, for as long as one of its tokens can be used: past its code's
// 5-minute lifetime (kept in the tokens' sessions too), past its access
// token's hour while its refresh token lives, and no longer.
func TestGrantListedWhileItsTokensWork(t *testing.T) {
	start, ahead := time.Now().UTC(), atomic.Int64{}
	now := func() time.Time { return start.Add(time.Duration(ahead.Load())) }
	a := newASTestWith(t, "", Config{RegisterRate: "1000-M", TokenRate: "1000-M", AuthorizeRate: "1000-M", Now: now})
	client, access, _ := a.tokens()
	store, err := OpenStore(statePath(a.dir), "", now) // the operator's, on the same clock
	if err != nil {
		t.Fatal(err)
	}
	o := &Operator{stateDir: a.dir, store: store}
	listed := func(when string) GrantInfo {
		t.Helper()
		grants, err := o.Grants()
		if err != nil || len(grants) != 1 || grants[0].ClientID != client {
			t.Fatalf("%s: grants %+v, %v; want the one grant", when, grants, err)
		}
		clients, err := o.Clients()
		if err != nil || len(clients) != 1 || clients[0].Grants != 1 {
			t.Fatalf("%s: clients %+v, %v; want one with one grant", when, clients, err)
		}
		if served, err := a.as.store.Grants(); err != nil || len(served) != 1 || !reflect.DeepEqual(served[0], grants[0]) {
			t.Fatalf("%s: the server's store lists %+v, %v; the operator %+v", when, served, err, grants)
		}
		return grants[0]
	}

	ahead.Store(int64(6 * time.Minute)) // the code has expired
	if !a.valid(access) {
		t.Fatal("the access token stopped working")
	}
	used := now().Truncate(time.Second)
	if g := listed("after the code expired"); !g.LastUsed.Equal(used) {
		t.Fatalf("last used %v, want %v", g.LastUsed, used)
	}
	ahead.Store(int64(2 * time.Hour)) // the access token has expired, the refresh token lives
	if g := listed("after the access token expired"); !g.LastUsed.Equal(used) {
		t.Fatalf("last used %v, want %v", g.LastUsed, used)
	}
	ahead.Store(int64(31 * 24 * time.Hour)) // every token has expired
	if grants, err := o.Grants(); err != nil || len(grants) != 0 {
		t.Fatalf("grants after every token expired: %+v, %v", grants, err)
	}
	if clients, _ := o.Clients(); len(clients) != 1 || clients[0].Grants != 0 {
		t.Fatalf("clients after every token expired: %+v", clients)
	}
}
