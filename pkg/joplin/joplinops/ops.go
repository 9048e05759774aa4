// Package joplinops defines the Joplin operation set: notes, notebooks,
// search and status over the Data API, with duplicate-safe creates.
package joplinops

import (
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/schema"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
)

// Toolset is the name users pass to --toolsets to enable these operations.
const Toolset = "joplin"

// Limits bounds what the Joplin operations ask of Joplin and return.
type Limits struct {
	// MaxScan bounds how many objects of one kind a preflight or tree walk reads.
	MaxScan int
	// MaxResourceBytes bounds the decoded size of one resource's content,
	// uploaded or downloaded.
	MaxResourceBytes int64
	// MaxWholeBody bounds a body read whole on request (get_note and
	// get_revision view "full", MCP resources/read); 0 means
	// DefaultMaxWholeBody. Reads that do not ask for the whole body are
	// cut at MaxInlineBody instead.
	MaxWholeBody int
}

// DefaultMaxWholeBody is the default ceiling of a whole body: 1 MiB of
// Markdown is some 250,000 tokens, beyond what an agent can use at once.
const DefaultMaxWholeBody = 1 << 20

// DefaultLimits suits personal notebooks of up to 100,000 notes and
// resources of up to 10 MiB.
var DefaultLimits = Limits{MaxScan: 100_000, MaxResourceBytes: 10 << 20, MaxWholeBody: DefaultMaxWholeBody}

// maxWholeBody is the ceiling of a whole body read on request.
func (o *Ops) maxWholeBody() int {
	if o.limits.MaxWholeBody > 0 {
		return o.limits.MaxWholeBody
	}
	return DefaultMaxWholeBody
}

// Ops holds the state shared by the Joplin operations.
type Ops struct {
	c      *joplin.Client
	limits Limits
	// vocabulary is what every operation's schema tags refer to (vocab),
	// built once for the catalog.
	vocabulary schema.Vocabulary
	// createSlot (capacity 1) serialises duplicate preflight and write
	// within the process; lockPath, when set, across processes (lock.go).
	createSlot chan struct{}
	lockPath   string
	// receipts holds the receipts of reviewed edits (package notechanges).
	receipts *receipts.Store
	// index, when set, answers note searches and is updated after writes.
	index *joplinindex.Indexer
	// view, when set, is the notebook-scope view on c (WithNotebookView).
	view *scopeview.View
	// sync reads the sync state the Joplin container shares (nil: none);
	// conflicts caches the conflict copies Joplin made (sync_status.go).
	sync      *syncstate.Reader
	conflicts conflictCache
	// activity reports the activity log's health (activity_status.go).
	activity ActivityHealth
}

// Option configures the operations.
type Option func(*Ops)

var allTransports = []registry.Transport{registry.MCPStdio, registry.MCPHTTP, registry.Actions}

// mcpTransports exposes an operation to MCP clients only: GPT Actions
// keeps to its 30 operations.
var mcpTransports = []registry.Transport{registry.MCPStdio, registry.MCPHTTP}

// Operations returns the Joplin operations in catalog order.
func Operations(c *joplin.Client, limits Limits, opts ...Option) []registry.Operation {
	o := &Ops{c: c, limits: limits, createSlot: make(chan struct{}, 1)}
	for _, opt := range opts {
		opt(o)
	}
	o.vocabulary = o.vocab()
	var ops []registry.Operation
	ops = append(ops, o.joplinStatus())
	ops = append(ops, o.noteOps()...)
	ops = append(ops, o.revisionOps()...)
	ops = append(ops, o.reviewedOps()...)
	ops = append(ops, o.notebookOps()...)
	ops = append(ops, o.tagOps()...)
	ops = append(ops, o.resourceOps()...)
	ops = append(ops, o.search(), o.fetch(), o.listTrash())
	return ops
}

// noteOps returns the note operations in catalog order.
func (o *Ops) noteOps() []registry.Operation {
	return []registry.Operation{o.listNotes(), o.getNote(), o.createNote(), o.updateNote(), o.trashNote(), o.restoreNote()}
}

// notebookOps returns the notebook operations in catalog order.
func (o *Ops) notebookOps() []registry.Operation {
	return []registry.Operation{
		o.listNotebooks(), o.getNotebook(), o.createNotebook(), o.updateNotebook(),
		o.trashNotebook(), o.restoreNotebook(),
	}
}

// tagOps returns the tag operations in catalog order.
func (o *Ops) tagOps() []registry.Operation {
	return []registry.Operation{
		o.listTags(), o.createTag(), o.updateTag(), o.deleteTag(), o.tagNote(), o.untagNote(),
	}
}

// resourceOps returns the resource operations in catalog order.
func (o *Ops) resourceOps() []registry.Operation {
	return []registry.Operation{
		o.listResources(), o.getResource(), o.getResourceContent(), o.createResource(),
		o.updateResource(), o.deleteResource(),
	}
}
