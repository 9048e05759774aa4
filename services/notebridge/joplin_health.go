package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/identity"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

// joplinHealth tells the container health check about a Joplin that
// cannot work without an operator: one that refuses the token
// (JOPLIN_AUTH_FAILED, also an unusable token file) or is not the one
// this bridge served (JOPLIN_CHANGED). A Joplin that does not answer is
// an outage, retried on every call: healthy. One authenticated request
// at most every healthEvery, whatever the probe rate, unless one of the
// files an operator changes to fix such a problem (the token file, the
// identity file `joplin forget` removes) changed since: the probe after
// the fix asks again, so the container is healthy at its next check.
type joplinHealth struct {
	c     *joplin.Client
	files []string

	mu      sync.Mutex
	checked time.Time
	stamps  []os.FileInfo
	err     error
	now     func() time.Time
}

const healthEvery = 10 * time.Second

func newJoplinHealth(c *joplin.Client, files ...string) *joplinHealth {
	return &joplinHealth{c: c, files: files, now: time.Now}
}

// joplinHealth is the health check of a server that serves the Joplin
// toolset; nil (always healthy) for one that does not (OKF only).
func (a *app) joplinHealth(tokenFile, stateDir string) func(context.Context) error {
	for _, op := range a.exec.Registry().Operations() {
		if op.Toolset == joplinops.Toolset {
			return newJoplinHealth(a.joplin, tokenFile, filepath.Join(stateDir, identity.FileName)).Check
		}
	}
	return nil
}

// Check returns the configuration error Joplin's answer shows, if any.
func (h *joplinHealth) Check(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	stamps := make([]os.FileInfo, len(h.files))
	for i, f := range h.files {
		stamps[i], _ = os.Stat(f) // nil: no such file
	}
	if !h.checked.IsZero() && h.now().Sub(h.checked) < healthEvery && slices.EqualFunc(stamps, h.stamps, joplin.Unchanged) {
		return h.err
	}
	h.stamps = stamps
	err := h.c.Get(principal.With(ctx, principal.System()), "/folders", url.Values{"limit": {"1"}, "fields": {"id"}}, nil)
	h.err = nil
	if de, ok := domainerr.As(err); ok && (de.Code == domainerr.JoplinAuthFailed || de.Code == domainerr.JoplinChanged) {
		h.err = de
	}
	h.checked = h.now()
	return h.err
}

// runJoplin runs `notebridge joplin forget`: the operator accepts the
// Joplin now configured in place of the one the bridge remembers. When a
// server answers at --url (the container's own), it asks it at once, so
// that the server records the Joplin now, and says whether it serves it.
func runJoplin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "forget" {
		return usageError(`"joplin" needs a subcommand (forget)`)
	}
	fs := flag.NewFlagSet("joplin forget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", defaultStateDir(), "state directory holding "+identity.FileName)
	health := fs.String("url", defaultHealthURL, "health URL of the running server, asked after the forget")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	had, err := identity.Forget(*stateDir)
	if err != nil {
		return fmt.Errorf("forget the Joplin identity: %w", err)
	}
	if had {
		fmt.Fprintf(stdout, "forgot the Joplin this bridge served (%s)\n", *stateDir)
	} else {
		fmt.Fprintf(stdout, "no Joplin identity was recorded in %s\n", *stateDir)
	}
	switch err := probeHealth(ctx, *health); {
	case errors.Is(err, errNoAnswer):
		_, err = fmt.Fprintln(stdout, "no server answers at "+*health+"; the next call records the Joplin it reaches")
		return err
	case err != nil:
		return fmt.Errorf("the running server still cannot serve the Joplin configured now: %w (notebridge doctor names the fix)", err)
	}
	_, err = fmt.Fprintln(stdout, "the running server serves the Joplin configured now; its container is healthy at the next health check")
	return err
}
