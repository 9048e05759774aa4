package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/writejournal"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/identity"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
	"github.com/notebridge/notebridge/pkg/okf/okfops"
	"github.com/notebridge/notebridge/pkg/toolsets"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// app is the assembled core: Joplin client, registry and executor. Building
// it performs no network I/O, so it starts while Joplin is down.
type app struct {
	joplin *joplin.Client
	exec   *executor.Executor
	log    *slog.Logger
	// mcpOpts configure the MCP servers (the tool profile).
	mcpOpts []mcpadapter.ServerOption
	// index is the search index; it opens on first use (see joplinindex).
	index *joplinindex.Indexer
	// syncRequests asks the Joplin container for a sync after each write
	// (nil without --sync-state-dir).
	syncRequests *syncstate.Requester
	// view narrows every Joplin request to its caller's notebooks; the
	// consent page lists the notebook tree from it.
	view *scopeview.View
	// activity records every call (activity.go); metrics counts them and
	// the rest /metrics serves (metrics.go).
	activity *activityRecorder
	metrics  *callMetrics
}

// close stops the search index's and the sync requests' background work.
func (a *app) close() {
	if err := a.index.Close(); err != nil {
		a.log.Warn("closing the search index", "err", err)
	}
	a.syncRequests.Close()
	if err := a.activity.log.Close(); err != nil {
		a.log.Warn("closing the activity log", "err", err)
	}
}

// setup parses a command's flags (the shared ones, the listener flags when
// withHTTP, and any extra) and assembles the app.
func setup(name string, args []string, stderr io.Writer, withHTTP bool, extra func(*flag.FlagSet, *config)) (*config, *app, error) {
	c := &config{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindFlags(fs, c, withHTTP)
	if extra != nil {
		extra(fs, c)
	}
	if err := parse(fs, args); err != nil {
		return nil, nil, err
	}
	log := c.logger()
	limit, fromEnv := executor.ApplyMemoryLimit(int64(c.MemoryLimit))
	log.Debug("memory limit", "bytes", limit, "from_gomemlimit", fromEnv)
	a, err := newApp(c, log)
	if err != nil {
		return nil, nil, err
	}
	return c, a, nil
}

func newApp(c *config, log *slog.Logger) (*app, error) {
	enabled, err := toolsets.Parse(c.Toolsets)
	if err != nil {
		return nil, err
	}
	core, err := toolsets.ParseProfile(c.Tools)
	if err != nil {
		return nil, err
	}
	syncState := syncstate.NewReader(c.SyncStateDir)
	jc, err := joplin.New(joplin.Config{
		BaseURL: c.JoplinURL, TokenFile: c.JoplinTokenFile,
		RequestTimeout: c.JoplinTimeout, AvailabilityWait: c.JoplinWait,
	})
	if err != nil {
		return nil, err
	}
	// Every write Joplin accepts asks for a sync; the search index (below)
	// observes the same writes.
	var requests *syncstate.Requester
	if c.SyncStateDir != "" && !c.ReadOnly {
		requests = syncstate.NewRequester(c.SyncStateDir, log)
		jc.Observe(func(context.Context, joplin.Write) { requests.Request() })
	}
	limits := joplinops.DefaultLimits
	limits.MaxResourceBytes = c.MaxResource
	if limits.MaxResourceBytes <= 0 {
		return nil, errors.New("--max-resource-bytes must be positive")
	}
	okfRoots, err := okfops.ParseRoots(c.OKFRoots)
	if err != nil {
		return nil, fmt.Errorf("--okf-roots: %w", err)
	}
	meaning, err := c.meaning(log)
	if err != nil {
		return nil, err
	}
	index := joplinindex.New(jc, joplinindex.Config{Path: joplinindex.File(c.StateDir, jc.Endpoint()), Log: log,
		SyncGeneration: syncState.Generation, Meaning: meaning})
	// The bridge serves the Joplin it first met, until the operator
	// accepts another (`notebridge joplin forget`).
	guard := identity.New(jc, c.StateDir, log)
	guard.OnAccept = index.Rebuild
	jc.SetGuard(guard)
	// Every request an operation makes of Joplin passes the caller's
	// notebook scope.
	view := scopeview.Install(jc, limits.MaxScan, syncState.Generation)
	rec, err := openActivity(c, log)
	if err != nil {
		return nil, err
	}
	jc.OnExchange(rec.metrics.exchanged)
	reg, err := toolsets.Build(toolsets.Config{
		Joplin: jc, JoplinLimits: limits, JoplinLockDir: c.StateDir, JoplinSearchIndex: index, JoplinSync: syncState,
		JoplinView: view, ActivityHealth: rec.health,
		Enabled: enabled, ReadOnly: c.ReadOnly,
		OKF: okfops.Config{AllowedRoots: okfRoots},
	})
	if err != nil {
		return nil, err
	}
	rec.metrics.watch(index, syncState, rec.log)
	ex, err := executor.New(reg, c.limits(), executor.WithLogger(log),
		executor.WithUncertainWriteSink(writejournal.Sink(writejournal.Open(c.StateDir), log)),
		executor.WithActivity(rec.record))
	if err != nil {
		return nil, err
	}
	a := &app{joplin: jc, exec: ex, log: log, index: index, syncRequests: requests, view: view, activity: rec, metrics: rec.metrics}
	if core != nil {
		a.mcpOpts = []mcpadapter.ServerOption{mcpadapter.Core(core, toolsets.CoreHidden)}
	}
	return a, nil
}

// meaning sets search by meaning up from the --embeddings-* flags: off
// unless a URL is set.
func (c *config) meaning(log *slog.Logger) (joplinindex.MeaningConfig, error) {
	if c.EmbeddingsURL == "" {
		if c.EmbeddingsModel != "" || c.EmbeddingsKeyFile != "" {
			return joplinindex.MeaningConfig{}, errors.New("--embeddings-model and --embeddings-key-file need --embeddings-url (search by meaning is off without it)")
		}
		return joplinindex.MeaningConfig{}, nil
	}
	p, err := embed.New(embed.Config{BaseURL: c.EmbeddingsURL, Model: c.EmbeddingsModel, KeyFile: c.EmbeddingsKeyFile})
	if err != nil {
		return joplinindex.MeaningConfig{}, fmt.Errorf("search by meaning: %w", err)
	}
	log.Info("search by meaning is on: note text is sent to the embedding provider", "endpoint", p.Endpoint(), "model", p.Model())
	return joplinindex.MeaningConfig{Provider: p}, nil
}

// followSync starts the search index at once when Joplin syncs with other
// devices (--sync-state-dir): synced notes then reach the index within a
// poll of the sync, even before the first search asks for it.
func (a *app) followSync(c *config) {
	if c.SyncStateDir != "" {
		a.index.Start()
	}
}

// ensureTokenFile returns path when set; otherwise it returns the generated
// token file in stateDir, creating it (mode 0600) on first run and printing
// its path, never its contents, to stderr.
func ensureTokenFile(path, stateDir, name string, stderr io.Writer) (string, error) {
	if path != "" {
		return path, nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("create state directory: %w", err)
	}
	path = filepath.Join(stateDir, name)
	created, err := writeNewToken(path)
	if err != nil {
		return "", err
	}
	if created {
		fmt.Fprintf(stderr, "notebridge: generated a bearer token in %s\n", path)
	}
	return path, nil
}

// checkJoplinTokenFile reports, at start, a Joplin token file that would
// make every Joplin call fail (unset, missing, unreadable, empty) or that
// others can read (the check the bearer files get). The error names the
// path, never the contents.
func checkJoplinTokenFile(path string) error {
	if path == "" {
		return errors.New("no Joplin token file is configured (--joplin-token-file); Joplin calls will fail with JOPLIN_AUTH_FAILED")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the Joplin token file %s cannot be read (%v); Joplin calls will fail with JOPLIN_AUTH_FAILED", path, errors.Unwrap(err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return fmt.Errorf("the Joplin token file %s is empty; Joplin calls will fail with JOPLIN_AUTH_FAILED", path)
	}
	if err := bearer.CheckPrivateFile(path); err != nil {
		return fmt.Errorf("the Joplin token file %s: %w", path, err)
	}
	return nil
}

// reportJoplin logs the Joplin settings an operator gets wrong: the token
// file (see checkJoplinTokenFile) and, when probe is set, whether Joplin
// answers at its URL. The probe runs in the background (it may wait up to
// --joplin-wait) and /ping carries no token.
func (a *app) reportJoplin(ctx context.Context, tokenFile string, probe bool) {
	if err := checkJoplinTokenFile(tokenFile); err != nil {
		a.log.Warn(err.Error(), "path", tokenFile)
	}
	if !probe {
		return
	}
	go func() {
		err := a.joplin.Ping(ctx)
		switch {
		case err == nil:
			a.log.Info("Joplin is reachable", "url", a.joplin.BaseURL())
		case ctx.Err() == nil:
			a.log.Warn("Joplin does not answer; calls fail until it does", "url", a.joplin.BaseURL(), "error", errMessage(err))
		}
	}()
}

// errMessage is a domain error's message, or err's text.
func errMessage(err error) string {
	if de, ok := domainerr.As(err); ok {
		return de.Message
	}
	return err.Error()
}
