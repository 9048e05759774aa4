package joplinops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/internal/filelock"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/filelocktest"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
	"github.com/notebridge/notebridge/pkg/testkit/scenarios"
)

func TestLockFileIsKeyedByTheJoplinEndpoint(t *testing.T) {
	file := func(base string) string {
		jc, err := joplin.New(joplin.Config{BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		return joplinops.LockFile("/state", jc.Endpoint())
	}
	same := file("http://127.0.0.1:41184")
	if filepath.Dir(same) != "/state/locks" || file("HTTP://127.0.0.1:41184/") != same {
		t.Fatalf("spellings of one endpoint differ: %s", same)
	}
	if file("http://LocalHost:80/") != file("http://localhost") || file("https://h:443") != file("https://h") {
		t.Fatal("default ports or case make a different lock")
	}
	if file("http://127.0.0.1:41185") == same || file("https://127.0.0.1:41184") == same {
		t.Fatal("different Joplins share a lock")
	}
}

// TestCreateWaitsForTheCrossProcessLock: while another holder has the lock
// file, a create waits without touching Joplin's notes, gives up when its
// context ends (CANCELLED, nothing written), and runs once the lock is free.
func TestCreateWaitsForTheCrossProcessLock(t *testing.T) {
	fake := joplinfake.New(token)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token), 0o600)
	jc, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tokenFile, AvailabilityWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	reg, err := registry.New(joplinops.Operations(jc, joplinops.DefaultLimits, joplinops.WithCreateLockDir(state))...)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	nb := scenarios.Folder(t, scenarios.Env{Joplin: jc}, "Inbox", "")
	args := json.RawMessage(`{"notebook_id":"` + nb + `","title":"Waits"}`)

	path := joplinops.LockFile(state, jc.Endpoint())
	release, err := filelock.Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	before := len(fake.Requests())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *domainerr.Error, 1)
	go func() {
		_, derr := ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "create_note", args)
		done <- derr
	}()
	filelocktest.AwaitWaiter(t, path)
	cancel()
	if derr := <-done; derr == nil || derr.Code != domainerr.Cancelled {
		t.Fatalf("want CANCELLED while the lock is held elsewhere, got %v", derr)
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Fatalf("a create waiting for the lock sent %d requests to Joplin", n)
	}
	release()
	if _, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "create_note", args); derr != nil {
		t.Fatalf("create after the lock was freed: %v", derr)
	}
	if countRequests(fake, http.MethodPost, "/notes") != 1 {
		t.Fatal("want exactly one create sent")
	}
}
