package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// runAuthorize is the one-time authorisation of an interactive target
// (Dropbox, OneDrive): Joplin's own `sync` in the profile, on the
// terminal, prints the URL to open and reads the code; Joplin keeps what
// it gets back (sync.N.auth) in the profile, and the sync that follows is
// the profile's first. The joplin service must be stopped meanwhile: a
// running Joplin keeps its settings in memory and would overwrite them.
func runAuthorize(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("authorize-sync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", defaultProfile(), "Joplin profile directory")
	running := fs.String("running-url", envOr("JOPLIN_SERVICE_URL", "http://joplin:41184"), "the joplin service's Data API, which must not answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if !targets[cfg.Target].interactive {
		return fmt.Errorf("authorize-sync is for the dropbox and onedrive targets; %s is %q, which needs no authorisation", envTarget, cfg.Target)
	}
	if answers(ctx, *running) {
		return errors.New("the joplin service is running: stop it first (docker compose stop joplin), then run this again, then docker compose up -d")
	}
	path, err := writeSettingsFile(cfg.JoplinSettings())
	if err != nil {
		return err
	}
	defer os.Remove(path)
	imp := exec.CommandContext(ctx, "joplin", "--profile", *profile, "config", "--import-file", path)
	if out, err := imp.CombinedOutput(); err != nil {
		return fmt.Errorf("configure the profile: %v: %s", err, shorten(string(out)))
	}
	fmt.Fprintf(stderr, "Authorising Joplin for %s: open the URL below, approve, and paste the code when asked.\n", cfg.Target)
	sync := exec.CommandContext(ctx, "joplin", "--profile", *profile, "sync")
	sync.Stdin, sync.Stdout, sync.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := sync.Run(); err != nil {
		return fmt.Errorf("joplin sync: %w", err)
	}
	// `joplin sync` exits 0 whether or not the authorisation completed:
	// the profile says (the value is read, never printed).
	key := authKey(cfg.Target)
	out, err := exec.CommandContext(ctx, "joplin", "--profile", *profile, "config", key).Output()
	if err != nil || !authValueSet(string(out), key) {
		return errors.New("the authorisation was not completed: nothing was stored; run authorize-sync again")
	}
	fmt.Fprintln(stderr, "Authorised. Start the stack again: docker compose up -d")
	return nil
}

// answers reports whether a Joplin Data API answers /ping at base.
func answers(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/ping", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
