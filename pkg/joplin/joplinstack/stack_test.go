package joplinstack

import (
	"testing"

	"github.com/notebridge/notebridge/pkg/joplin"
)

func TestNew(t *testing.T) {
	if _, err := New(Config{Joplin: joplinConfig("ftp://joplin"), StateDir: t.TempDir()}); err == nil {
		t.Error("a base URL that is no http(s) origin was accepted")
	}
	for _, c := range []struct {
		syncDir  bool
		readOnly bool
		requests bool
	}{{false, false, false}, {true, false, true}, {true, true, false}} {
		cfg := Config{Joplin: joplinConfig("http://127.0.0.1:1"), StateDir: t.TempDir(), ReadOnly: c.readOnly, MaxScan: 10}
		if c.syncDir {
			cfg.SyncStateDir = t.TempDir()
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if s.Client == nil || s.Index == nil || s.View == nil || s.SyncState == nil {
			t.Fatalf("%+v: a part is missing: %+v", c, s)
		}
		if got := s.SyncRequests != nil; got != c.requests {
			t.Errorf("%+v: sync requests %v, want %v", c, got, c.requests)
		}
		s.SyncRequests.Close()
		if err := s.Index.Close(); err != nil {
			t.Error(err)
		}
	}
}

func joplinConfig(base string) joplin.Config { return joplin.Config{BaseURL: base} }
