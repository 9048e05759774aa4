// Package bearer authenticates HTTP callers with a bearer token read from
// a file. The file is looked at on every request (stat-keyed: re-read when
// it changed, always within two seconds of a change), so rotation takes
// effect at once; every malformed header fails closed;
// tokens are compared in constant time through their SHA-256 digests; and a
// token file that collides with another credential (same file or same
// token) refuses every request until the collision is fixed.
package bearer

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/notebridge/notebridge/pkg/internal/privatefile"
)

// ErrUnauthorized is returned for every rejected credential; callers answer
// 401 without saying which check failed.
var ErrUnauthorized = errors.New("unauthorized")

// TokenFile is a bearer token held in a file. Every check stats the file
// (and its peers) and re-reads what changed, so a rotated token takes effect
// on the very next request.
type TokenFile struct {
	path string
	// name, peers and log are set by DistinctFrom.
	name       string
	peers      []Credential
	log        *slog.Logger
	conflicted atomic.Bool
	memo       atomic.Pointer[checkMemo]
}

// NewTokenFile checks that path is a regular file that group and others
// cannot read, and returns a reader for it.
func NewTokenFile(path string) (*TokenFile, error) {
	if err := privatefile.Check(path); err != nil {
		return nil, err
	}
	return &TokenFile{path: path}, nil
}

// DistinctFrom returns a token file for the same path that refuses every
// check with ErrCredentialConflict while its file and one of peers are the
// same file or hold the same token. The peers are re-read on every check,
// like the file itself, so rotating any of them into a collision takes
// effect on the next request, and so does the fix. name describes the file
// in the log lines, which name files and never tokens; log may be nil.
func (t *TokenFile) DistinctFrom(name string, log *slog.Logger, peers ...Credential) *TokenFile {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TokenFile{path: t.path, name: name, peers: peers, log: log}
}

// checkPeers fails closed while the file collides with a peer, logging
// once when a collision starts and once when it ends.
func (t *TokenFile) checkPeers(own *[sha256.Size]byte) error {
	for _, p := range t.peers {
		if p.Path == "" {
			continue
		}
		if why := collision(t.path, p.Path, own, fileDigest(p.Path)); why != "" {
			if t.conflicted.CompareAndSwap(false, true) {
				t.log.Error("credential conflict: refusing every request until it is fixed",
					"file", t.name, "path", t.path, "other_file", p.Name, "other_path", p.Path, "reason", why)
			}
			return ErrCredentialConflict
		}
	}
	if t.conflicted.CompareAndSwap(true, false) {
		t.log.Info("credential conflict fixed: serving requests again", "file", t.name, "path", t.path)
	}
	return nil
}

// digest returns the SHA-256 of the token currently in the file.
func (t *TokenFile) digest() ([sha256.Size]byte, error) {
	if privatefile.Check(t.path) != nil {
		return [sha256.Size]byte{}, ErrUnauthorized
	}
	b, err := readFile(t.path)
	if err != nil {
		return [sha256.Size]byte{}, ErrUnauthorized
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		// An empty or trivially short token file never authenticates anyone.
		return [sha256.Size]byte{}, ErrUnauthorized
	}
	return sha256.Sum256([]byte(tok)), nil
}

// currentDigest returns the digest of the file's token after the peer
// checks. While neither the file nor a peer has changed since the last full
// check (same stat, and not changed within the racy window), that check's
// outcome is reused instead of re-reading every file.
func (t *TokenFile) currentDigest() ([sha256.Size]byte, error) {
	keys, trusted := t.currentKeys()
	if m := t.memoFor(keys); trusted && m != nil {
		return m.digest, m.err
	}
	want, err := t.digest()
	if err == nil {
		err = t.checkPeers(&want)
	}
	if trusted {
		t.memo.Store(&checkMemo{keys: keys, digest: want, err: err})
	}
	return want, err
}

// Check authenticates the request's Authorization headers. It returns
// ErrCredentialConflict, whatever the headers, while the file collides with
// a peer (see DistinctFrom), and ErrUnauthorized for every other refusal.
func (t *TokenFile) Check(h http.Header) error {
	want, err := t.currentDigest()
	if err != nil {
		return err
	}
	presented, err := ParseBearer(h)
	if err != nil {
		return err
	}
	got := sha256.Sum256([]byte(presented))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return ErrUnauthorized
	}
	return nil
}

// ParseBearer extracts the token from exactly one well-formed
// "Authorization: Bearer <token>" header. It fails closed on no header, an
// empty one, two headers, another scheme, missing or extra spaces, a
// comma-joined value, surrounding whitespace, and non-ASCII or control bytes.
func ParseBearer(h http.Header) (string, error) {
	values := h.Values("Authorization")
	if len(values) != 1 {
		return "", ErrUnauthorized
	}
	v := values[0]
	const prefix = "Bearer "
	if !strings.HasPrefix(v, prefix) {
		return "", ErrUnauthorized
	}
	tok := v[len(prefix):]
	if tok == "" {
		return "", ErrUnauthorized
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		// Visible ASCII only: no space, tab, comma, control or non-ASCII.
		if c <= 0x20 || c >= 0x7f || c == ',' {
			return "", ErrUnauthorized
		}
	}
	return tok, nil
}
