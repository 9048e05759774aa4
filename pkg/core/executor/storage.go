package executor

import (
	"errors"
	"syscall"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// storageFull classifies a handler error caused by a full disk (ENOSPC) or
// an exhausted quota (EDQUOT), met while writing the bridge's own state (a
// receipt, a journal, the index): STORAGE_FULL, retryable once space is
// freed. It names the state directory by its setting, never by its path.
func storageFull(err error) (*domainerr.Error, bool) {
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return nil, false
	}
	return domainerr.Retryable(domainerr.StorageFull,
		"the disk holding the bridge's state directory (--state-dir) is full; free space there and retry"), true
}
