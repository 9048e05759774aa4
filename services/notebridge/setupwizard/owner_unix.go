//go:build unix

package setupwizard

import (
	"os"
	"syscall"
)

// ownerOf is the uid and gid owning the file st describes.
func ownerOf(st os.FileInfo) (int, int, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(sys.Uid), int(sys.Gid), true
}
