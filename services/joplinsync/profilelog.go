package main

import (
	"io"
	"os"
	"regexp"
	"strings"
)

// ProfileLog reads what Joplin wrote to the profile's log.txt during a
// sync. Joplin's synchronizer reports network failures (a refused
// connection, after about 21 s of retries) only there: the sync's own
// output then ends as if it had succeeded.
type ProfileLog struct {
	Path string
}

// maxLogRead bounds what is read of the log after one sync.
const maxLogRead = 1 << 20

// Mark is the log's size now (the offset the next read starts from).
func (l ProfileLog) Mark() int64 {
	st, err := os.Stat(l.Path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// syncErrorRe finds the synchronizer's error lines; the message is the
// rest of the line (a stack trace follows on the next lines).
var syncErrorRe = regexp.MustCompile(`(?m)Synchronizer: \[error\] (.+)$`)

// LastSyncError returns the last synchronizer error logged after mark, or
// "" when there is none (or no log).
func (l ProfileLog) LastSyncError(mark int64) string {
	f, err := os.Open(l.Path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	if st.Size() < mark {
		mark = 0 // the log was rotated or truncated
	}
	if st.Size()-mark > maxLogRead {
		mark = st.Size() - maxLogRead
	}
	b, err := io.ReadAll(io.NewSectionReader(f, mark, st.Size()-mark))
	if err != nil {
		return ""
	}
	m := syncErrorRe.FindAllStringSubmatch(string(b), -1)
	if len(m) == 0 {
		return ""
	}
	return strings.TrimSpace(m[len(m)-1][1])
}
