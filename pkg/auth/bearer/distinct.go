package bearer

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrCredentialConflict is returned by Check, for every request, while the
// token file and one of its peers are the same file or hold the same token.
// Callers refuse the request without saying more.
var ErrCredentialConflict = errors.New("credential conflict")

// Credential names one secret file for the distinctness checks: the Joplin
// token, the MCP bearer token or the Actions bearer token.
type Credential struct {
	// Name describes the file in errors and logs, e.g. "the MCP bearer token file".
	Name string
	// Path is the file; an empty path means the credential is not configured.
	Path string
}

// Distinct reports, naming both files and never a token, the first pair of
// creds that are the same file (same path, hard link or symlink) or hold
// the same token. Credentials with an empty path are skipped; a file that
// cannot be read is compared by identity only.
func Distinct(creds ...Credential) error {
	var set []Credential
	var digests []*[sha256.Size]byte
	for _, c := range creds {
		if c.Path != "" {
			set = append(set, c)
			digests = append(digests, fileDigest(c.Path))
		}
	}
	for i := range set {
		for j := i + 1; j < len(set); j++ {
			if why := collision(set[i].Path, set[j].Path, digests[i], digests[j]); why != "" {
				return fmt.Errorf("%s (%s) and %s (%s) %s; each credential needs its own file and its own token",
					set[i].Name, set[i].Path, set[j].Name, set[j].Path, why)
			}
		}
	}
	return nil
}

// collision says why two credential files collide, or "" when they do not.
// Tokens are compared in constant time through their digests.
func collision(a, b string, da, db *[sha256.Size]byte) string {
	if sameFile(a, b) {
		return "are the same file"
	}
	if da != nil && db != nil && subtle.ConstantTimeCompare(da[:], db[:]) == 1 {
		return "hold the same token"
	}
	return ""
}

// sameFile reports whether a and b name the same file: the same cleaned
// absolute path, or the same inode reached through hard links or symlinks.
func sameFile(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// fileDigest returns the SHA-256 of the trimmed token in path, or nil when
// the file cannot be read or holds no token.
func fileDigest(path string) *[sha256.Size]byte {
	b, err := readFile(path)
	if err != nil {
		return nil
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return nil
	}
	d := sha256.Sum256([]byte(tok))
	return &d
}
