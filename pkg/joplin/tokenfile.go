package joplin

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/notebridge/notebridge/pkg/internal/privatefile"
)

// CheckTokenFile reports, at start, a Joplin token file that would
// make every Joplin call fail (unset, missing, unreadable, empty) or that
// others can read (the check the bearer files get). The error names the
// path, never the contents.
func CheckTokenFile(path string) error {
	if path == "" {
		return errors.New("no Joplin token file is configured (--joplin-token-file); Joplin calls will fail with JOPLIN_AUTH_FAILED")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the Joplin token file %s cannot be read (%v); Joplin calls will fail with JOPLIN_AUTH_FAILED", path, errors.Unwrap(err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return fmt.Errorf("the Joplin token file %s is empty; Joplin calls will fail with JOPLIN_AUTH_FAILED", path)
	}
	if err := privatefile.Check(path); err != nil {
		return fmt.Errorf("the Joplin token file %s: %w", path, err)
	}
	return nil
}
