package bearer

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
)

// ImportTokenFile replaces path, atomically and 0600, with the single token
// held in src. Errors name the files, never the token.
func ImportTokenFile(src, path string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, errors.Unwrap(err))
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return fmt.Errorf("%s does not hold a single token", src)
	}
	return WriteSecretFile(path, tok)
}

// WriteSecretFile replaces path, atomically and 0600, with value and a
// newline. Errors name the file, never the value.
func WriteSecretFile(path, value string) error {
	if err := atomicfile.Write(path, []byte(value+"\n"), time.Time{}); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
