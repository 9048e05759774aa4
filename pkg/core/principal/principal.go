// Package principal names who is calling an operation: the owner on stdio,
// the holder of the static MCP or Actions bearer token, or an OAuth grant
// limited to its scopes. Every executor call carries one; the zero
// Principal is nobody, and the executor refuses it.
package principal

import (
	"context"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

// Kind says how a caller authenticated.
type Kind uint8

// The kinds of caller. None, the zero Kind, is no caller at all.
const (
	None         Kind = iota
	StdioOwner        // the person who started `notebridge mcp stdio`
	MCPToken          // the static bearer token of MCP over HTTP
	ActionsToken      // the static bearer token of GPT Actions
	OAuthGrant        // an access token of notebridge's authorization server
	ConsoleOwner      // the owner signed in to the console (/owner/) with the passphrase
	Notebridge        // notebridge's own work, never an agent caller (System)
)

// Principal is one authenticated caller. Build it with Stdio, StaticMCP,
// StaticActions or OAuth; the zero value is no caller.
type Principal struct {
	kind    Kind
	grantID string
	scopes  scope.Set // what an OAuth grant may do; unused for other kinds
	// notebooks is what the caller may read and write of Joplin: every
	// notebook unless narrowed (WithNotebooks) or granted less (OAuth).
	notebooks notebookscope.Scope
}

// System is notebridge itself, for the requests of its own work: it sees
// every notebook. The executor refuses it: no operation runs as it.
func System() Principal { return Principal{kind: Notebridge, notebooks: notebookscope.Everything()} }

// Stdio is the owner talking to notebridge over stdio.
func Stdio() Principal { return Principal{kind: StdioOwner, notebooks: notebookscope.Everything()} }

// Console is the owner acting from the console: every notebook, no scope
// limit, like the owner on stdio.
func Console() Principal { return Principal{kind: ConsoleOwner, notebooks: notebookscope.Everything()} }

// StaticMCP is a caller that presented the static MCP bearer token.
func StaticMCP() Principal { return Principal{kind: MCPToken, notebooks: notebookscope.Everything()} }

// StaticActions is a caller that presented the static Actions bearer token.
func StaticActions() Principal {
	return Principal{kind: ActionsToken, notebooks: notebookscope.Everything()}
}

// OAuth is a caller holding an access token of the grant grantID, limited
// to granted and to the notebooks the grant names.
func OAuth(grantID string, granted scope.Set, notebooks notebookscope.Scope) Principal {
	return Principal{kind: OAuthGrant, grantID: grantID, scopes: granted, notebooks: notebooks}
}

// WithNotebooks returns p limited to notebooks (a static token's or the
// stdio owner's setting).
func (p Principal) WithNotebooks(notebooks notebookscope.Scope) Principal {
	p.notebooks = notebooks
	return p
}

// Within returns p limited to *notebooks, or p itself for nil (a setting
// left unset: every notebook).
func (p Principal) Within(notebooks *notebookscope.Scope) Principal {
	if notebooks == nil {
		return p
	}
	return p.WithNotebooks(*notebooks)
}

// Notebooks returns the notebooks p may read and write. The zero
// Principal's is empty: it sees nothing.
func (p Principal) Notebooks() notebookscope.Scope { return p.notebooks }

// Kind says how the caller authenticated; None for the zero Principal.
func (p Principal) Kind() Kind { return p.kind }

// Known reports whether p is a principal at all (not the zero Principal).
func (p Principal) Known() bool { return p.kind != None }

// Agent reports whether p is an authenticated agent caller: neither the
// zero Principal nor notebridge's own (System). Only agents run operations.
func (p Principal) Agent() bool { return p.kind != None && p.kind != Notebridge }

// Limited reports whether p may run only the operations its scopes cover
// (an OAuth grant). The owner and the static-token holders are not limited.
func (p Principal) Limited() bool { return p.kind == OAuthGrant }

// Scopes returns what an OAuth grant was granted (empty for other kinds).
func (p Principal) Scopes() scope.Set { return p.scopes }

// GrantID identifies an OAuth grant; it stays the same across token
// refreshes. Empty for other kinds.
func (p Principal) GrantID() string { return p.grantID }

// Credential names how p authenticated, never a secret: "stdio",
// "token:mcp", "token:actions", "oauth:<grant id>", "console", or "none"
// (the activity log, the notebook pins and the console name callers so).
func (p Principal) Credential() string {
	switch p.kind {
	case StdioOwner:
		return "stdio"
	case MCPToken:
		return "token:mcp"
	case ActionsToken:
		return "token:actions"
	case OAuthGrant:
		return "oauth:" + p.grantID
	case ConsoleOwner:
		return "console"
	}
	return "none"
}

type ctxKey struct{}

// With returns ctx carrying p, for transports that hand a context, not a
// Principal, to the code that calls the executor.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the Principal ctx carries; the zero Principal and false
// when it carries none.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok && p.Known()
}
