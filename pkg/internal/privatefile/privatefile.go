// Package privatefile checks that a file holding a secret (a bearer token,
// an API key) is private to its owner before anyone reads it.
package privatefile

import (
	"errors"
	"fmt"
	"os"
)

// Check reports whether path is a regular file with no group or world
// permissions. The error names the problem, never the contents.
func Check(path string) error {
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
