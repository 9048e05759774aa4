package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/notebridge/notebridge/pkg/auth/consent"
	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/writejournal"
	"github.com/notebridge/notebridge/pkg/joplin/edits"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/transport/console"
)

// bindConsoleFlags registers the owner's console flags.
func bindConsoleFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.Console, "console", "auto", "the owner's console at "+console.Prefix+" on the public origin: on, off, or auto (on with --oauth)")
	fs.DurationVar(&c.ConsoleIdleTimeout, "console-idle-timeout", 0, "a console session without a request for this long ends (default 15m)")
}

// consoleOn says whether the console is served: with OAuth unless off,
// without it only when asked for.
func (c *config) consoleOn() (bool, error) {
	switch strings.ToLower(strings.TrimSpace(c.Console)) {
	case "auto", "":
		return c.OAuth, nil
	case "on", "true", "1":
		return true, nil
	case "off", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("--console must be on, off or auto, not %q", c.Console)
}

// consoleBeside serves the console at /owner/ beside next (the MCP
// listener), behind the authorization server's host check and client
// address resolution; everything else goes to next.
func consoleBeside(c *config, a *app, checker *consent.Checker, next http.Handler) (http.Handler, error) {
	origin, err := oauthOrigin(c)
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "--oauth needs", "the owner's console (--console) needs", 1))
	}
	proxies, err := oauthserver.ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("--trusted-proxies: %w", err)
	}
	receiptStore := receipts.Open(joplinops.ReceiptDir(c.StateDir, a.joplin.Endpoint()), receipts.DefaultLimits)
	journal := writejournal.Open(c.StateDir)
	con, err := console.New(console.Config{
		Origin: origin, Checker: checker, Owner: ownerCaller{a.exec}, NoteTitle: a.noteTitle, Notebooks: a.view.Tree,
		OpenGrants: func() (console.Grants, error) {
			op, err := oauthserver.OpenOperator(c.StateDir)
			if errors.Is(err, oauthserver.ErrNoState) {
				return nil, console.ErrNoGrants
			}
			return op, err
		},
		Tokens:      c.staticTokens(),
		Activity:    a.activity.log,
		Changes:     receiptChanges{receiptStore},
		Journal:     func() ([]writejournal.Entry, error) { return writejournal.Read(journal.Path()) },
		IdleTimeout: c.ConsoleIdleTimeout,
	})
	if err != nil {
		return nil, err
	}
	front := oauthserver.NewFront(origin, proxies, splitList(c.InternalHosts))(con)
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, front)
	mux.Handle("/owner", http.RedirectHandler(console.Prefix, http.StatusMovedPermanently))
	mux.Handle("/", next)
	a.log.Info("serving the owner's console", "url", origin+console.Prefix)
	return mux, nil
}

// staticTokens describes the static bearer tokens for the console.
func (c *config) staticTokens() []console.StaticToken {
	describe := func(read, write string) string {
		if strings.TrimSpace(read) == "" && strings.TrimSpace(write) == "" {
			return "all notebooks"
		}
		s := "read: " + read
		if strings.TrimSpace(write) != "" {
			s += "; write: " + write
		}
		return s
	}
	out := []console.StaticToken{{Name: "MCP bearer token", Credential: principal.StaticMCP().Credential(), Notebooks: describe(c.MCPNotebooks, c.MCPWriteNotebooks),
		Rotate: "replace the token file " + c.MCPTokenFile + " with a new token and restart the bridge"}}
	if c.ActionsEnabled {
		out = append(out, console.StaticToken{Name: "GPT Actions bearer token", Credential: principal.StaticActions().Credential(),
			Notebooks: describe(c.ActionsNotebooks, c.ActionsWriteNotebooks),
			Rotate:    "replace the token file " + c.ActionsTokenFile + " with a new token, restart the bridge and update the GPT"})
	}
	return out
}

// ownerCaller runs operations as the owner signed in to the console,
// through the executor on the owner's transport (stdio's exposure).
type ownerCaller struct {
	exec interface {
		Call(context.Context, principal.Principal, registry.Transport, string, json.RawMessage) (json.RawMessage, *domainerr.Error)
	}
}

func (o ownerCaller) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, *domainerr.Error) {
	return o.exec.Call(ctx, principal.Console(), registry.MCPStdio, name, args)
}

// receiptChanges lists the receipts of reviewed edits with a diff of each
// note, newest first.
type receiptChanges struct{ store *receipts.Store }

// maxDiffBytes bounds one note's diff on the page.
const maxDiffBytes = 16 << 10

func (rc receiptChanges) List(context.Context) ([]console.Change, error) {
	sums, err := rc.store.List()
	if err != nil {
		return nil, err
	}
	out := make([]console.Change, 0, len(sums))
	for _, s := range slices.Backward(sums) {
		r, ok, err := rc.store.Load(s.ID)
		if err != nil || !ok {
			continue
		}
		ch := console.Change{ID: r.ID, Kind: r.Kind, Undoes: r.Undoes, Created: r.Created, Done: r.Done, Skipped: r.Skipped}
		for _, n := range r.Notes {
			cn := console.ChangedNote{ID: n.ID, TitleBefore: n.Before.Title, TitleAfter: n.After.Title,
				Moved: n.Before.NotebookID != n.After.NotebookID, Written: r.Written[n.ID]}
			diff, cut := edits.Diff(n.ID, n.Before.Body, n.After.Body, maxDiffBytes)
			if cut > 0 {
				diff += fmt.Sprintf("… %d more lines\n", cut)
			}
			cn.Diff = diff
			ch.Notes = append(ch.Notes, cn)
		}
		out = append(out, ch)
	}
	return out, nil
}

// noteTitle reads a note's current title through the owner's view, for
// the console's feed: a read of Joplin, not an operation call.
func (a *app) noteTitle(ctx context.Context, id string) (string, bool) {
	var n struct {
		Title string `json:"title"`
	}
	err := a.joplin.Get(principal.With(ctx, principal.Console()), "/notes/"+url.PathEscape(id), url.Values{"fields": {"title"}}, &n)
	return n.Title, err == nil
}
