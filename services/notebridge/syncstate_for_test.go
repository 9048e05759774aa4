package main

import (
	"io"
	"log/slog"
	"testing"
)

// TestSyncStateOnlyForItsJoplin: after switching to another Joplin the
// bundled Joplin's sync state is neither reported nor requested (it would
// read as the served Joplin's sync).
func TestSyncStateOnlyForItsJoplin(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		url, owner, want string
	}{
		{"http://joplin:41184", "http://joplin:41184", "/sync"},
		{"http://joplin:41184/", "http://joplin:41184", "/sync"},
		{"http://host.docker.internal:41184", "http://joplin:41184", ""},
		{"http://host.docker.internal:41184", "", "/sync"}, // no owner named: followed, as before
	} {
		cfg := &config{JoplinURL: c.url, SyncStateDir: "/sync", SyncStateJoplin: c.owner}
		if got := syncStateFor(cfg, log); got != c.want {
			t.Errorf("Joplin %s, state of %q: %q, want %q", c.url, c.owner, got, c.want)
		}
	}
}
