// Package joplinstack assembles the Joplin client the service runs on, in
// one call: the client, then what each of its requests and writes passes
// through (the identity guard, the caller's notebook view, the search index
// and the sync requests that observe its writes), each installed before
// the client is handed out, in the one order that works (the guard's accept
// rebuilds the index, so the index comes first).
package joplinstack

import (
	"context"
	"log/slog"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/identity"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/scopepin"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
)

// Config configures the stack.
type Config struct {
	Joplin joplin.Config
	// StateDir holds the identity of the Joplin served and the index.
	StateDir string
	// SyncStateDir, when set, is shared with the Joplin container's sync:
	// its state is read from there, and every accepted write asks for a
	// sync there (unless ReadOnly).
	SyncStateDir string
	ReadOnly     bool
	// MaxScan bounds the notes the view reads to find the notes linking a
	// resource.
	MaxScan int
	Meaning joplinindex.MeaningConfig
	Log     *slog.Logger
	// OnExchange, when set, is told of every exchange with Joplin (the
	// metrics count them).
	OnExchange func(joplin.Exchange)
}

// Stack is the assembled client and the parts the service also talks to.
type Stack struct {
	Client    *joplin.Client
	Index     *joplinindex.Indexer
	View      *scopeview.View
	SyncState *syncstate.Reader
	// SyncRequests is nil without a SyncStateDir or when ReadOnly.
	SyncRequests *syncstate.Requester
}

// New builds the client and installs its guard, view and observers before
// it returns. It does no network I/O.
func New(cfg Config) (*Stack, error) {
	jc, err := joplin.New(cfg.Joplin)
	if err != nil {
		return nil, err
	}
	s := &Stack{Client: jc, SyncState: syncstate.NewReader(cfg.SyncStateDir)}
	if cfg.OnExchange != nil {
		jc.OnExchange(cfg.OnExchange)
	}
	// Every write Joplin accepts asks for a sync; the search index (below)
	// observes the same writes.
	if cfg.SyncStateDir != "" && !cfg.ReadOnly {
		requests := syncstate.NewRequester(cfg.SyncStateDir, cfg.Log)
		jc.Observe(func(context.Context, joplin.Write) { requests.Request() })
		s.SyncRequests = requests
	}
	s.Index = joplinindex.New(jc, joplinindex.Config{Path: joplinindex.File(cfg.StateDir, jc.Endpoint()), Log: cfg.Log,
		SyncGeneration: s.SyncState.Generation, Meaning: cfg.Meaning})
	// The bridge serves the Joplin it first met, until the operator
	// accepts another (`notebridge joplin forget`).
	guard := identity.New(jc, cfg.StateDir, cfg.Log)
	guard.OnAccept = s.Index.Rebuild
	jc.SetGuard(guard)
	// Every request an operation makes of Joplin passes the caller's
	// notebook scope.
	s.View = scopeview.Install(jc, cfg.MaxScan, s.SyncState.Generation)
	// A notebook path in a scope stays the notebooks it first named, so
	// a rename cannot widen another credential's scope.
	s.View.SetPins(scopepin.Open(cfg.StateDir, cfg.Log))
	// The tags limited callers made by reusing a title they could not see
	// stay theirs across restarts. A damaged record hides them again
	// (fail closed), which is worth a warning, not a refusal to start.
	if err := s.View.KeepClaimsIn(cfg.StateDir); err != nil && cfg.Log != nil {
		cfg.Log.Warn("notebook scopes: the tags reused by limited callers", "err", err)
	}
	return s, nil
}
