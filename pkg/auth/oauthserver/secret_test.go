package oauthserver

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

const legacySecret = "legacy-secret-legacy-secret-legacy-secret-0123"

// writeLegacyState writes a state file as notebridge wrote it before
// client secrets were SHA-256 digests: one confidential client whose
// secret_hash is a bcrypt hash of legacySecret.
func writeLegacyState(t *testing.T, dir string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(legacySecret), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"version":1,"clients":{"legacy-client":{"id":"legacy-client","name":"Legacy","secret_hash":"` +
		base64.StdEncoding.EncodeToString(hash) + `","redirect_uris":["` + testRedirect + `"],` +
		`"grant_types":["authorization_code","refresh_token"],"scopes":["notes:read","okf:read"],` +
		`"token_endpoint_auth_method":"client_secret_basic","registered_at":"2026-11-30T10:00:00Z","registered_via":"dcr"}},` +
		`"codes":{},"pkce":{},"access":{},"refresh":{}}`
	if err := os.MkdirAll(filepath.Join(dir, "oauth"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "oauth", "state.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// storedSecret returns a client's stored secret hash, as on disk.
func (a *asTest) storedSecret(client string) string {
	a.t.Helper()
	st, err := OpenStore(filepath.Join(a.dir, "oauth", "state.json"), testResource, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	c, ok := st.lookupClient(client)
	if !ok {
		a.t.Fatalf("client %s is not on disk", client)
	}
	return string(c.SecretHash)
}

// confidentialClient registers a client_secret_basic client.
func (a *asTest) confidentialClient() (id, secret string) {
	a.t.Helper()
	status, out := a.register(`{"redirect_uris":["` + testRedirect + `"],"client_name":"Confidential"}`)
	if status != http.StatusCreated {
		a.t.Fatalf("register: %d %v", status, out)
	}
	return out["client_id"].(string), out["client_secret"].(string)
}

// basic sends form to path with HTTP basic client credentials.
func (a *asTest) basic(path, id, secret string, form url.Values) (*http.Response, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return a.do(req)
}

// TestSecretsAreSHA256Digests: a new client secret is stored as its
// SHA-256 digest, never as the secret, and only the right secret passes.
func TestSecretsAreSHA256Digests(t *testing.T) {
	a := newASTest(t, "")
	id, secret := a.confidentialClient()
	stored := a.storedSecret(id)
	if !strings.HasPrefix(stored, sha256Prefix) || len(stored) != len(sha256Prefix)+64 || strings.Contains(stored, secret) {
		t.Fatalf("stored secret %q", stored)
	}
	raw, _ := os.ReadFile(filepath.Join(a.dir, "oauth", "state.json"))
	if strings.Contains(string(raw), secret) {
		t.Fatal("the state file holds the secret")
	}
	h := a.as.secrets
	if err := h.Compare(t.Context(), []byte(stored), []byte(secret)); err != nil {
		t.Fatalf("right secret: %v", err)
	}
	for _, bad := range []string{"", secret + "x", secret[:len(secret)-1], strings.ToUpper(secret)} {
		if err := h.Compare(t.Context(), []byte(stored), []byte(bad)); !errors.Is(err, errSecretMismatch) {
			t.Errorf("secret %q: %v", bad, err)
		}
	}
	for _, hash := range []string{"", "sha256:", "sha256:zz", "plain", stored[:len(stored)-2]} {
		if err := h.Compare(t.Context(), []byte(hash), []byte(secret)); !errors.Is(err, errSecretMismatch) {
			t.Errorf("stored %q: %v", hash, err)
		}
	}
	v, c := pkce()
	if resp, out := a.basic(TokenPath, id, secret, exchange(id, a.code(id, c), v)); resp.StatusCode != 200 || out["access_token"] == nil {
		t.Fatalf("token with the right secret: %d %v", resp.StatusCode, out)
	}
}

// TestLegacyBcryptSecretIsMigrated: a state file of an older notebridge
// (bcrypt secret hashes) still loads; a wrong secret changes nothing, the
// right one works and replaces the hash on disk by its SHA-256 digest,
// which keeps working after a restart without bcrypt.
func TestLegacyBcryptSecretIsMigrated(t *testing.T) {
	dir := t.TempDir()
	writeLegacyState(t, dir)
	a := newASTest(t, dir)
	before := a.storedSecret("legacy-client")
	if !isBcrypt([]byte(before)) {
		t.Fatalf("the legacy state holds %q", before)
	}
	if resp, out := a.basic(RevokePath, "legacy-client", "wrong-secret", url.Values{"token": {"x"}}); resp.StatusCode != 401 || out["error"] != "invalid_client" {
		t.Fatalf("wrong legacy secret: %d %v", resp.StatusCode, out)
	}
	if got := a.storedSecret("legacy-client"); got != before {
		t.Fatal("a wrong secret changed the stored hash")
	}
	v, c := pkce()
	code := a.code("legacy-client", c)
	if resp, out := a.basic(TokenPath, "legacy-client", legacySecret, exchange("legacy-client", code, v)); resp.StatusCode != 200 || out["access_token"] == nil {
		t.Fatalf("token with the legacy secret: %d %v", resp.StatusCode, out)
	}
	after := a.storedSecret("legacy-client")
	if after != string(hashSecret([]byte(legacySecret))) {
		t.Fatalf("after the first use the disk holds %q", after)
	}

	restarted := newASTest(t, dir)
	restarted.as.secrets.bcrypt = NewGate(1, time.Hour)
	if err := restarted.as.secrets.bcrypt.Enter(t.Context()); err != nil { // bcrypt could not run now
		t.Fatal(err)
	}
	v, c = pkce()
	code = restarted.code("legacy-client", c)
	if resp, out := restarted.basic(TokenPath, "legacy-client", legacySecret, exchange("legacy-client", code, v)); resp.StatusCode != 200 {
		t.Fatalf("token with the migrated secret after a restart: %d %v", resp.StatusCode, out)
	}
}

// TestBcryptChecksAreBounded: while every bcrypt slot is taken, a legacy
// client's token request waits, then gets 429 with Retry-After and no side
// effect (the code still works, the hash is not migrated); once a slot is
// free the same request succeeds.
func TestBcryptChecksAreBounded(t *testing.T) {
	dir := t.TempDir()
	writeLegacyState(t, dir)
	a := newASTest(t, dir)
	gate := NewGate(1, 5*time.Millisecond)
	a.as.secrets.bcrypt = gate
	if err := gate.Enter(t.Context()); err != nil {
		t.Fatal(err)
	}
	v, c := pkce()
	form := exchange("legacy-client", a.code("legacy-client", c), v)
	resp, out := a.basic(TokenPath, "legacy-client", legacySecret, form)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || out["error"] != "slow_down" {
		t.Fatalf("bcrypt slots full: %d %q %v", resp.StatusCode, resp.Header.Get("Retry-After"), out["error"])
	}
	if resp, out := a.basic(RevokePath, "legacy-client", legacySecret, url.Values{"token": {"x"}}); resp.StatusCode != http.StatusTooManyRequests || out["error"] != "slow_down" {
		t.Fatalf("revocation with bcrypt slots full: %d %v", resp.StatusCode, out["error"])
	}
	if !isBcrypt([]byte(a.storedSecret("legacy-client"))) || a.counts()[2] != 0 {
		t.Fatal("a refused check migrated the hash or issued a token")
	}
	gate.Leave()
	if resp, out := a.basic(TokenPath, "legacy-client", legacySecret, form); resp.StatusCode != 200 {
		t.Fatalf("the same request with a free slot: %d %v", resp.StatusCode, out)
	}
}

// TestClientSecretRefusals is the negative matrix of client
// authentication: each refusal has its status and error and issues,
// revokes and migrates nothing.
func TestClientSecretRefusals(t *testing.T) {
	dir := t.TempDir()
	writeLegacyState(t, dir)
	a := newASTest(t, dir)
	id, secret := a.confidentialClient()
	otherID, otherSecret := a.confidentialClient()
	v, c := pkce()
	form := exchange(id, a.code(id, c), v)
	_, access, _ := a.tokens()
	cases := []struct {
		name, path, id, secret string
		form                   url.Values
	}{
		{"wrong secret", TokenPath, id, secret + "x", form},
		{"empty secret", TokenPath, id, "", form},
		{"another client's secret", TokenPath, id, otherSecret, form},
		{"the secret with another client's id", TokenPath, otherID, secret, form},
		{"wrong secret at revocation", RevokePath, id, "wrong", url.Values{"token": {access}}},
		{"wrong legacy secret", TokenPath, "legacy-client", secret, exchange("legacy-client", "code", v)},
	}
	for _, tc := range cases {
		before := a.counts()
		resp, out := a.basic(tc.path, tc.id, tc.secret, tc.form)
		if resp.StatusCode != http.StatusUnauthorized || out["error"] != "invalid_client" || a.counts() != before {
			t.Errorf("%s: %d %v, counts %v → %v", tc.name, resp.StatusCode, out["error"], before, a.counts())
		}
	}
	if !a.valid(access) || !isBcrypt([]byte(a.storedSecret("legacy-client"))) {
		t.Fatal("a refused request revoked a token or migrated a hash")
	}
	if resp, out := a.basic(TokenPath, id, secret, form); resp.StatusCode != 200 {
		t.Fatalf("the code after the refusals: %d %v", resp.StatusCode, out)
	}
}

// TestGate: at most n holders; a caller beyond waits at most the wait
// (ErrBusy) or until its context ends.
func TestGate(t *testing.T) {
	g := NewGate(2, time.Millisecond)
	for range 2 {
		if err := g.Enter(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Enter(t.Context()); !errors.Is(err, ErrBusy) {
		t.Fatalf("third holder: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := NewGate(1, time.Hour).Enter(ctx); err != nil {
		t.Fatalf("a free slot with an ended context: %v", err)
	}
	full := NewGate(1, time.Hour)
	_ = full.Enter(t.Context())
	if err := full.Enter(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context while full: %v", err)
	}
	g.Leave()
	if err := g.Enter(t.Context()); err != nil {
		t.Fatalf("after Leave: %v", err)
	}
	if NewGate(1, 2*time.Second).RetryAfter() != 2 || NewGate(1, time.Millisecond).RetryAfter() != 1 || NewGate(0, 0).RetryAfter() != 1 {
		t.Fatal("RetryAfter")
	}
}
