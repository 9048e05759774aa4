package joplinindex

import "time"

// LastPoll is when the index last finished catching up with Joplin (zero
// before its first pass): the metrics report the index's lag from it.
func (x *Indexer) LastPoll() time.Time {
	ns := x.lastPoll.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
