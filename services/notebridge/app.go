package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/writejournal"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/joplinstack"
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
		return nil, fmt.Errorf("--toolsets: %w", err)
	}
	core, err := toolsets.ParseProfile(c.Tools)
	if err != nil {
		return nil, fmt.Errorf("--tools: %w", err)
	}
	limits := joplinops.DefaultLimits
	limits.MaxResourceBytes = c.MaxResource
	if limits.MaxResourceBytes <= 0 {
		return nil, errors.New("--max-resource-bytes must be positive")
	}
	if limits.MaxWholeBody = c.MaxWholeBody; limits.MaxWholeBody < 0 {
		return nil, errors.New("--max-whole-body-bytes must not be negative (0: the default)")
	}
	okfRoots, err := okfops.ParseRoots(c.OKFRoots)
	if err != nil {
		return nil, fmt.Errorf("--okf-roots: %w", err)
	}
	meaning, err := c.meaning(log)
	if err != nil {
		return nil, err
	}
	rec, err := openActivity(c, log)
	if err != nil {
		return nil, err
	}
	c.SyncStateDir = syncStateFor(c, log)
	stack, err := joplinstack.New(joplinstack.Config{
		Joplin: joplin.Config{
			BaseURL: c.JoplinURL, TokenFile: c.JoplinTokenFile,
			RequestTimeout: c.JoplinTimeout, AvailabilityWait: c.JoplinWait,
		},
		StateDir: c.StateDir, SyncStateDir: c.SyncStateDir, ReadOnly: c.ReadOnly,
		MaxScan: limits.MaxScan, Meaning: meaning, Log: log, OnExchange: rec.metrics.exchanged,
	})
	if err != nil {
		return nil, err
	}
	jc, index, view := stack.Client, stack.Index, stack.View
	reg, err := toolsets.Build(toolsets.Config{
		Joplin: jc, JoplinLimits: limits, JoplinLockDir: c.StateDir, JoplinSearchIndex: index, JoplinSync: stack.SyncState,
		JoplinView: view, ActivityHealth: rec.health,
		Enabled: enabled, ReadOnly: c.ReadOnly,
		OKF: okfops.Config{AllowedRoots: okfRoots},
	})
	if err != nil {
		return nil, err
	}
	rec.metrics.watch(index, stack.SyncState, rec.log)
	opts := []executor.Option{executor.WithLogger(log),
		executor.WithUncertainWriteSink(writejournal.Sink(writejournal.Open(c.StateDir), log)),
		executor.WithActivity(rec.record)}
	if c.ValidateOutput {
		opts = append(opts, executor.WithOutputValidation())
	}
	ex, err := executor.New(reg, c.limits(), opts...)
	if err != nil {
		return nil, err
	}
	a := &app{joplin: jc, exec: ex, log: log, index: index, syncRequests: stack.SyncRequests, view: view, activity: rec, metrics: rec.metrics}
	if core != nil {
		a.mcpOpts = []mcpadapter.ServerOption{mcpadapter.Core(core, toolsets.CoreHidden)}
	}
	return a, nil
}

// meaning sets search by meaning up from the --embeddings-* flags: off
// unless a URL is set.
func (c *config) meaning(log *slog.Logger) (joplinindex.MeaningConfig, error) {
	if c.EmbeddingsURL == "" && c.bundledEmbedderRuns(log) {
		bundled := *c
		bundled.EmbeddingsURL = c.EmbeddingsBundledURL
		if bundled.EmbeddingsModel == "" {
			bundled.EmbeddingsModel = bundledEmbeddingsModel
		}
		return bundled.meaning(log)
	}
	if c.EmbeddingsURL == "" {
		if c.EmbeddingsModel != "" || c.EmbeddingsKeyFile != "" || c.EmbeddingsQueryPrefix != "" || c.EmbeddingsDocumentPrefix != "" {
			return joplinindex.MeaningConfig{}, errors.New("--embeddings-model, --embeddings-key-file and the --embeddings-*-prefix settings need --embeddings-url (search by meaning is off without it)")
		}
		return joplinindex.MeaningConfig{}, nil
	}
	p, err := embed.New(embed.Config{BaseURL: c.EmbeddingsURL, Model: c.EmbeddingsModel, KeyFile: c.EmbeddingsKeyFile,
		QueryPrefix: prefixSetting(c.EmbeddingsQueryPrefix), DocumentPrefix: prefixSetting(c.EmbeddingsDocumentPrefix)})
	if err != nil {
		return joplinindex.MeaningConfig{}, fmt.Errorf("search by meaning: %w", err)
	}
	log.Info("search by meaning is on: note text is sent to the embedding provider", "endpoint", p.Endpoint(), "model", p.Model(),
		"query_prefix", p.Prefixes().Query, "document_prefix", p.Prefixes().Document)
	return joplinindex.MeaningConfig{Provider: p}, nil
}

// bundledEmbeddingsModel is the model deploy/embedder serves.
const bundledEmbeddingsModel = "universal-sentence-encoder-lite"

// bundledEmbedderRuns reports whether the bundled embedder is there: its
// URL is set (compose sets it) and its host resolves, which on compose's
// network it does only while the profile "meaning" runs the embedder.
func (c *config) bundledEmbedderRuns(log *slog.Logger) bool {
	if c.EmbeddingsBundledURL == "" {
		return false
	}
	u, err := url.Parse(c.EmbeddingsBundledURL)
	if err != nil || u.Hostname() == "" {
		log.Warn("--embeddings-bundled-url is not a URL; search by meaning stays off", "url", c.EmbeddingsBundledURL)
		return false
	}
	lookup := c.lookupHost
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := lookup(ctx, u.Hostname()); err != nil {
		log.Debug("no bundled embedder (the compose profile \"meaning\" is off); search by meaning stays off", "host", u.Hostname())
		return false
	}
	log.Info("found the bundled embedder (compose profile \"meaning\")", "url", c.EmbeddingsBundledURL)
	return true
}

// prefixSetting reads an --embeddings-*-prefix setting: nil (the model's
// known prefix) when empty, "" for none, the text itself otherwise.
func prefixSetting(v string) *string {
	switch v {
	case "":
		return nil
	case "none":
		none := ""
		return &none
	}
	return &v
}

// followSync starts the search index at once when Joplin syncs with other
// devices (--sync-state-dir): synced notes then reach the index within a
// poll of the sync, even before the first search asks for it.
// syncStateFor is the sync state directory the bridge follows: none when
// the state belongs to another Joplin than the one served (the person
// switched to their own Joplin, and the bundled one's sync would be
// reported as theirs).
func syncStateFor(c *config, log *slog.Logger) string {
	if c.SyncStateDir == "" || c.SyncStateJoplin == "" || strings.TrimSuffix(c.SyncStateJoplin, "/") == strings.TrimSuffix(c.JoplinURL, "/") {
		return c.SyncStateDir
	}
	log.Info("the sync state belongs to another Joplin than the one served; its sync is neither reported nor requested",
		"sync_state_joplin", c.SyncStateJoplin, "joplin_url", c.JoplinURL)
	return ""
}

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

// reportJoplin logs the Joplin settings an operator gets wrong: the token
// file (see joplin.CheckTokenFile) and, when probe is set, whether Joplin
// answers at its URL. The probe runs in the background (it may wait up to
// --joplin-wait) and /ping carries no token.
func (a *app) reportJoplin(ctx context.Context, tokenFile string, probe bool) {
	if err := joplin.CheckTokenFile(tokenFile); err != nil {
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
