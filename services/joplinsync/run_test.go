package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeJoplinScript plays `joplin batch --continue-on-failure -` as a real
// process on PATH: a prompt before each command; `sync` succeeds once,
// and the second `sync` makes it exit (a crashed Joplin).
const fakeJoplinScript = `#!/bin/sh
syncs=0
printf 'command> '
while IFS= read -r line; do
  case "$line" in
    sync)
      syncs=$((syncs + 1))
      [ "$syncs" -ge 2 ] && exit 3
      printf 'Synchronisation target:  (6)\nStarting synchronisation...\nCompleted: 02/12/2026 00:14 (286ms)\n' ;;
    "e2ee status") printf 'Encryption is: Disabled\n' ;;
  esac
  printf 'command> '
done
`

// TestRunSupervisorOwnsTheJoplinProcess: `joplinsync run` starts the batch
// process, configures it, starts the Data API, syncs at once and records
// it; when Joplin dies it returns an error (the container then exits and
// restarts) instead of serving without a Data API.
func TestRunSupervisorOwnsTheJoplinProcess(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "joplin"), []byte(fakeJoplinScript), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	state := filepath.Join(t.TempDir(), "sync")
	t.Setenv(envStateDir, state)
	t.Setenv(envSecretsDir, secretsDir(t, map[string]string{secretPassword: "pw"}))
	t.Setenv(envTarget, "webdav")
	t.Setenv(envURL, "http://dav/joplin")
	t.Setenv(envUser, "u")
	t.Setenv(envInterval, "1s")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var log bytes.Buffer
	err := runSupervisor(ctx, []string{"--profile", t.TempDir()}, &log)
	if err == nil || !strings.Contains(err.Error(), "joplin process exited") {
		t.Fatalf("runSupervisor = %v, want the exit of the joplin process\n%s", err, log.String())
	}
	st, _ := readStatus(t, StatusFile{Dir: state})
	if st.CompletedSyncs != 1 || st.LastSuccessAt == nil || st.Target != TargetWebDAV {
		t.Fatalf("status %+v\n%s", st, log.String())
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %v, %v", fi.Mode(), err)
	}
	if strings.Contains(log.String(), "pw\n") {
		t.Errorf("log shows the password: %s", log.String())
	}
}
