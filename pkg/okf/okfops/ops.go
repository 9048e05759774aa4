// Package okfops defines the OKF operation set: reading Open Knowledge
// Format bundles (list, read, search, neighbors, validate), replacing a
// concept (write_concept), and the reviewed preview → apply workflows
// (concept patch, v0.1 → v0.2 migration, temporal upgrade), all writing
// through the transactional store. Bundle contents are inert data: no
// operation runs, fetches or dereferences anything a document names.
package okfops

import (
	"context"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/schema"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

// Toolset is the name users pass to --toolsets to enable these operations.
const Toolset = "okf"

// Actor is the fixed principal recorded for every OKF write made through
// these operations. It is metadata, not an authenticated identity.
const Actor = "okf-mcp"

// Config configures the OKF operations.
type Config struct {
	// AllowedRoots, when non-empty, exposes the operations on MCP HTTP too
	// and confines every bundle_path to these roots. Stdio-only servers
	// leave it empty: the host's tool policy then decides which bundle the
	// caller may select.
	AllowedRoots []string
	Limits       bundle.Limits
	// StoreHook is passed to the store (fault injection in tests).
	StoreHook func(step string) error
	// Cache is the manifest cache reads and revisions reuse (nil:
	// filecache.Default). Tests inject one with their own clock.
	Cache *filecache.Cache
}

// ParseRoots reads the operator's comma-separated list of allowed bundle
// roots (--okf-roots), dropping empty items: every root must be an
// absolute, clean path.
func ParseRoots(list string) ([]string, error) {
	var roots []string
	for _, r := range strings.Split(list, ",") {
		if r = strings.TrimSpace(r); r != "" {
			roots = append(roots, r)
		}
	}
	if err := bundle.CheckRoots(roots); err != nil {
		return nil, err
	}
	return roots, nil
}

// Ops holds the OKF operations' configuration.
type Ops struct {
	cfg Config
}

// Operations returns the OKF operations in catalog order.
func Operations(cfg Config) []registry.Operation {
	if cfg.Limits == (bundle.Limits{}) {
		cfg.Limits = bundle.DefaultLimits
	}
	if cfg.Cache == nil {
		cfg.Cache = filecache.Default
	}
	o := &Ops{cfg: cfg}
	return []registry.Operation{
		o.listConcepts(), o.readConcept(), o.searchConcepts(), o.getNeighbors(), o.validateBundle(),
		o.writeConcept(),
		o.previewConceptPatch(), o.applyConceptPatch(),
		o.previewV02Migration(), o.applyV02Migration(),
		o.previewTemporalUpgrade(), o.applyTemporalUpgrade(),
	}
}

func (o *Ops) exposure() []registry.Transport {
	if len(o.cfg.AllowedRoots) > 0 {
		return []registry.Transport{registry.MCPStdio, registry.MCPHTTP}
	}
	return []registry.Transport{registry.MCPStdio}
}

// meta fills what every OKF operation shares.
func (o *Ops) meta(name, title, desc string, effect registry.Effect) registry.Meta {
	return registry.Meta{
		Name: name, Title: title, Description: desc, Toolset: Toolset,
		Effect: effect, Exposure: o.exposure(), Vocab: o.vocab(),
	}
}

// vocab names the enums and configured bounds the operations' struct tags
// refer to. Each call returns fresh maps, so one operation may add its own.
func (o *Ops) vocab() schema.Vocabulary {
	l := o.cfg.Limits
	return schema.Vocabulary{
		Enums: map[string][]string{"trust_tier": doc.TrustTiers, "actor": {Actor}, "patch_op": patchOps},
		Bounds: map[string]int64{
			"concept_id": bundle.MaxConceptIDBytes, "receipts": 10_000,
			"max_hits": int64(l.MaxHits), "default_hits": int64(min(50, l.MaxHits)),
			"max_problems": int64(l.MaxProblems), "max_file_bytes": l.MaxFileBytes,
			"max_diff_files": maxDiffFiles, "max_patch_ops": maxPatchOps, "max_temporal_mappings": maxTemporalMappings,
		},
	}
}

// open opens bundle_path under the path policy, with the manifest cache
// of the root it pinned.
func (o *Ops) open(path string) (*bundle.Bundle, error) {
	b, err := bundle.Open(path, o.cfg.AllowedRoots, o.cfg.Limits)
	if err != nil {
		return nil, err
	}
	b.Cache = o.cfg.Cache.ForRoot(b.Root)
	return b, nil
}

// snapshot is the bundle's manifest, reusing the cached digests of
// unchanged files.
func (o *Ops) snapshot(b *bundle.Bundle) (store.Manifest, error) {
	return store.SnapshotIn(b.Root, o.storeLimits(), b.Cache)
}

// readLocked runs fn with the bundle open and the shared lease held, so a
// read never observes a commit half-applied by a cooperating writer. It
// writes nothing: without .okf/lock there is no lease to take.
func (o *Ops) readLocked(ctx context.Context, path string, fn func(*bundle.Bundle) error) error {
	b, err := o.open(path)
	if err != nil {
		return err
	}
	defer b.Close()
	lease, err := store.LockShared(ctx, b.Root)
	if err != nil {
		return bundle.PathErr(err)
	}
	defer lease.Release()
	return fn(b)
}
