// Package activity is the bridge's activity log: one entry per operation
// call on every surface, saying who called what, how it ended and which
// objects it read or changed, by id only. An entry never holds a note's
// title or body, a query's text or a secret, so the log is safe to hand to
// someone else. The executor writes it (pkg/core/executor); the Joplin view
// names the ids a call was served (pkg/joplin/scopeview) through the
// Collector the executor puts in the call's context.
package activity

import (
	"encoding/json"
	"time"
)

// The surfaces a call arrives on.
const (
	SurfaceStdio     = "stdio"
	SurfaceMCPHTTP   = "mcp-http"
	SurfaceActions   = "actions"
	SurfaceResources = "resources" // an MCP resources/read or resources/list
	SurfaceCallTool  = "call_tool" // an operation run through call_tool; Tool names it
)

// OutcomeOK is the outcome of a call that succeeded; a failed call's is
// its error code.
const OutcomeOK = "ok"

// Entry is one operation call.
type Entry struct {
	Time       time.Time `json:"time"`
	Surface    string    `json:"surface"`
	Credential string    `json:"credential"` // "oauth:<grant id>", "token:mcp", "token:actions", "stdio"
	Client     string    `json:"client,omitempty"`
	Tool       string    `json:"tool"`
	Outcome    string    `json:"outcome"`
	DurationMS float64   `json:"duration_ms"`
	Notes      []string  `json:"notes"`
	Notebooks  []string  `json:"notebooks"`
	Tags       []string  `json:"tags"`
	Resources  []string  `json:"resources"`
	Receipt    *string   `json:"receipt"`
	Bytes      int       `json:"bytes"`
	Query      *Query    `json:"query,omitempty"`
}

// Query summarises a search query without its text.
type Query struct {
	Length int    `json:"length"` // in characters
	Mode   string `json:"mode,omitempty"`
}

// MarshalJSON writes e with every id list as an array, never null.
func (e Entry) MarshalJSON() ([]byte, error) { return e.encode() }

// encode is MarshalJSON without the check encoding/json makes of a
// MarshalJSON result (the log's writer calls it directly).
func (e Entry) encode() ([]byte, error) {
	type plain Entry
	p := plain(e)
	for _, l := range []*[]string{&p.Notes, &p.Notebooks, &p.Tags, &p.Resources} {
		if *l == nil {
			*l = []string{}
		}
	}
	return json.Marshal(p)
}

// Filter selects entries; zero fields select everything.
type Filter struct {
	Since    time.Time
	Grant    string // an OAuth grant id, or a whole credential ("token:mcp")
	Tool     string
	Note     string
	Notebook string
	Limit    int // at most this many, newest first; 0 for all
}

// Match reports whether f selects e.
func (f Filter) Match(e Entry) bool {
	switch {
	case !f.Since.IsZero() && e.Time.Before(f.Since):
		return false
	case f.Grant != "" && e.Credential != f.Grant && e.Credential != "oauth:"+f.Grant:
		return false
	case f.Tool != "" && e.Tool != f.Tool:
		return false
	case f.Note != "" && !contains(e.Notes, f.Note):
		return false
	case f.Notebook != "" && !contains(e.Notebooks, f.Notebook):
		return false
	}
	return true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
