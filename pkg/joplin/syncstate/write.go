package syncstate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
)

// WriteStatus replaces the status file in dir atomically (0600, temporary
// file, fsync, rename): the sync supervisor's side of the file Reader
// reads. It stamps the schema this package reads.
func WriteStatus(dir string, s Status) error {
	s.Schema = Schema
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sync status: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, StatusFile), append(b, '\n'), time.Time{}); err != nil {
		return fmt.Errorf("write %s: %w", StatusFile, err)
	}
	return nil
}
