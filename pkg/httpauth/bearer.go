// Package httpauth authenticates HTTP callers with a bearer token read from
// a file. The file is re-read on every request, so rotation takes effect
// at once; every malformed header fails closed; and
// tokens are compared in constant time through their SHA-256 digests.
package httpauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// ErrUnauthorized is returned for every rejected credential; callers answer
// 401 without saying which check failed.
var ErrUnauthorized = errors.New("unauthorized")

// TokenFile is a bearer token held in a file. The file is read on every
// check, so a rotated token takes effect on the very next request.
type TokenFile struct {
	path string
}

// NewTokenFile checks that path is a regular file that group and others
// cannot read, and returns a reader for it.
func NewTokenFile(path string) (*TokenFile, error) {
	if err := CheckPrivateFile(path); err != nil {
		return nil, err
	}
	return &TokenFile{path: path}, nil
}

// CheckPrivateFile reports whether path is a regular file with no group or
// world permissions. The error names the problem, never the contents.
func CheckPrivateFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("token file: %w", errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return errors.New("token file must be a regular file (not a symlink or directory)")
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("token file must not be readable by group or others (mode %04o; use chmod 600)", fi.Mode().Perm())
	}
	return nil
}

// digest returns the SHA-256 of the token currently in the file.
func (t *TokenFile) digest() ([sha256.Size]byte, error) {
	if CheckPrivateFile(t.path) != nil {
		return [sha256.Size]byte{}, ErrUnauthorized
	}
	b, err := os.ReadFile(t.path)
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

// Check authenticates the request's Authorization headers.
func (t *TokenFile) Check(h http.Header) error {
	presented, err := ParseBearer(h)
	if err != nil {
		return err
	}
	want, err := t.digest()
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
