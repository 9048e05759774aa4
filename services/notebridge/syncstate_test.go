package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestWritesAskForASync: with --sync-state-dir, a write to Joplin through
// the bridge leaves the request file the Joplin container's supervisor
// watches; a read does not, nor does a read-only bridge.
func TestWritesAskForASync(t *testing.T) {
	const tok = "fake-joplin-token-0123456789"
	srv := httptest.NewServer(joplinfake.New(tok))
	defer srv.Close()
	tf := filepath.Join(t.TempDir(), "joplin-token")
	os.WriteFile(tf, []byte(tok), 0o600)
	for _, readOnly := range []bool{false, true} {
		syncDir := t.TempDir()
		c := &config{JoplinURL: srv.URL, JoplinTokenFile: tf, JoplinWait: time.Second, JoplinTimeout: 5 * time.Second,
			StateDir: t.TempDir(), SyncStateDir: syncDir, ReadOnly: readOnly, MaxResource: 1 << 20,
			MaxRequestBytes: 1 << 20, MaxDepth: 64, MaxActive: 4}
		a, err := newApp(c, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		req := filepath.Join(syncDir, syncstate.RequestFile)
		call := func(name, args string) {
			if _, derr := a.exec.Call(context.Background(), principal.Stdio(), registry.MCPStdio, name, json.RawMessage(args)); derr != nil && !readOnly {
				t.Fatalf("%s: %v", name, derr)
			}
		}
		call("list_notebooks", `{}`)
		if _, err := os.Stat(req); err == nil {
			t.Errorf("read-only %v: a read asked for a sync", readOnly)
		}
		call("create_notebook", `{"title":"Groceries"}`)
		a.close()
		b, err := os.ReadFile(req)
		if readOnly {
			if err == nil {
				t.Error("a read-only bridge asked for a sync")
			}
			continue
		}
		if err != nil {
			t.Fatalf("no sync request after a write: %v", err)
		}
		if _, err := time.Parse(time.RFC3339, string(b[:len(b)-1])); err != nil {
			t.Errorf("request content %q: %v", b, err)
		}
	}
}
