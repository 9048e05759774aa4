// Package toolsets assembles the registry from the enabled toolsets. It is
// the one place that decides which operation sets exist and in what order.
package toolsets

import (
	"fmt"
	"sort"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
	"github.com/notebridge/notebridge/pkg/okf/okfops"
	"github.com/notebridge/notebridge/pkg/toolsets/okfbridge"
)

// Toolsets lists the known toolsets, in catalog order.
var Toolsets = []string{joplinops.Toolset, okfops.Toolset}

// Config is what the operation sets need at construction. Building the
// catalog does no network or disk I/O.
type Config struct {
	Joplin       *joplin.Client
	JoplinLimits joplinops.Limits
	// JoplinLockDir, when set, holds the lock file that serialises
	// duplicate-checked Joplin writes across processes (the state
	// directory); empty serialises them within the process only. It also
	// holds the receipts of reviewed note edits; without it apply and
	// undo of note changes fail.
	JoplinLockDir string
	// JoplinSearchIndex, when set, answers note searches and is kept fresh
	// by the Joplin writes.
	JoplinSearchIndex *joplinindex.Indexer
	// JoplinSync, when set, reads the sync state the Joplin container
	// shares, for joplin_status and the conflict copies.
	JoplinSync *syncstate.Reader
	// JoplinView, when set, is the notebook-scope view installed on
	// Joplin (scopeview.Install): searches of the index and
	// joplin_status honour it too.
	JoplinView *scopeview.View
	// ActivityHealth, when set, is the activity log's health, which
	// joplin_status reports.
	ActivityHealth joplinops.ActivityHealth
	OKF            okfops.Config
	// Enabled names the toolsets to include; empty means all.
	Enabled []string
	// ReadOnly selects the read-only profile: only operations whose effect
	// is read are exposed, and the executor refuses the others.
	ReadOnly bool
}

// Parse parses a comma-separated toolset list.
func Parse(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return append([]string(nil), Toolsets...), nil
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !contains(Toolsets, name) {
			return nil, fmt.Errorf("unknown toolset %q (known: %s)", name, strings.Join(Toolsets, ", "))
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return index(out[i]) < index(out[j]) })
	return out, nil
}

// Build returns the registry for cfg.
func Build(cfg Config) (*registry.Registry, error) {
	enabled := cfg.Enabled
	if len(enabled) == 0 {
		enabled = Toolsets
	}
	var ops []registry.Operation
	if contains(enabled, joplinops.Toolset) {
		var opts []joplinops.Option
		if cfg.JoplinLockDir != "" {
			opts = append(opts, joplinops.WithCreateLockDir(cfg.JoplinLockDir),
				joplinops.WithReceiptDir(cfg.JoplinLockDir, receipts.DefaultLimits))
		}
		if cfg.JoplinSync != nil {
			opts = append(opts, joplinops.WithSyncState(cfg.JoplinSync))
		}
		if cfg.JoplinView != nil {
			opts = append(opts, joplinops.WithNotebookView(cfg.JoplinView))
		}
		if cfg.JoplinSearchIndex != nil {
			opts = append(opts, joplinops.WithSearchIndex(cfg.JoplinSearchIndex))
		}
		if cfg.ActivityHealth != nil {
			opts = append(opts, joplinops.WithActivityHealth(cfg.ActivityHealth))
		}
		ops = append(ops, joplinops.Operations(cfg.Joplin, cfg.JoplinLimits, opts...)...)
	}
	if contains(enabled, okfops.Toolset) {
		ops = append(ops, okfops.Operations(cfg.OKF)...)
	}
	// The Joplin ↔ OKF bridge needs both sides.
	if contains(enabled, joplinops.Toolset) && contains(enabled, okfops.Toolset) {
		ops = append(ops, okfbridge.Operations(cfg.Joplin, cfg.OKF)...)
	}
	reg, err := registry.New(ops...)
	if err != nil || !cfg.ReadOnly {
		return reg, err
	}
	return reg.ReadOnly(), nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func index(s string) int {
	for i, v := range Toolsets {
		if v == s {
			return i
		}
	}
	return len(Toolsets)
}

// Tool profiles: which operations an MCP server lists (ParseProfile).
const (
	ProfileAll  = "all"
	ProfileCore = "core"
)

// CoreTools are the operations the core profile lists: an agent's loop of
// search, read, list, create and one-call edits. The others stay reachable
// through find_tools and call_tool (mcpadapter.Core).
var CoreTools = []string{"search", "get_note", "list_notes", "create_note", "edit_note"}

// CoreHidden names optional inputs the core profile leaves out of its
// listed schemas (the executor still takes them): search's mode, whose
// default (hybrid once every note is embedded, else keyword) suits an
// agent's loop, and list_notes' rare resource filter.
var CoreHidden = map[string][]string{"search": {"mode"}, "list_notes": {"resource_id"}}

// ParseProfile checks a --tools value and returns the operations it lists,
// nil meaning all.
func ParseProfile(s string) ([]string, error) {
	switch strings.TrimSpace(s) {
	case "", ProfileAll:
		return nil, nil
	case ProfileCore:
		return append([]string{}, CoreTools...), nil
	}
	return nil, fmt.Errorf("unknown tool profile %q (known: %s, %s)", s, ProfileAll, ProfileCore)
}
