// Package okfbridge connects the two zones: it publishes a Joplin notebook
// as an OKF v0.2 bundle (export_notebook_to_okf) and turns a curated
// bundle back into a reviewed Joplin change set (preview_okf_to_notebook),
// which the note-change machinery (preview_note_changes,
// apply_note_changes, undo_note_changes) reviews, applies and undoes. It
// reads Joplin through the caller's scoped view and writes bundles only
// through the OKF store.
package okfbridge

import (
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/okfops"
	"github.com/notebridge/notebridge/pkg/okf/store"
)

// Actor is recorded in the receipts of exports.
const Actor = "okf-joplin-export"

// Ops holds what the bridge operations need.
type Ops struct {
	jop *joplin.Client
	cfg okfops.Config
}

// Operations returns the bridge operations in catalog order. They belong
// to the okf toolset (its OAuth scope, its transports: never Actions); the
// catalog includes them only when both toolsets are on.
func Operations(c *joplin.Client, cfg okfops.Config) []registry.Operation {
	if cfg.Limits == (bundle.Limits{}) {
		cfg.Limits = bundle.DefaultLimits
	}
	if cfg.Cache == nil {
		cfg.Cache = filecache.Default
	}
	o := &Ops{jop: c, cfg: cfg}
	return []registry.Operation{o.exportNotebook(), o.previewImport()}
}

func (o *Ops) meta(name, title, desc string, effect registry.Effect) registry.Meta {
	exposure := []registry.Transport{registry.MCPStdio}
	if len(o.cfg.AllowedRoots) > 0 {
		exposure = append(exposure, registry.MCPHTTP)
	}
	return registry.Meta{Name: name, Title: title, Description: desc, Toolset: okfops.Toolset, Effect: effect, Exposure: exposure}
}

func (o *Ops) maxFileBytes() int64 { return o.cfg.Limits.MaxFileBytes }

// open opens a bundle root under the configured roots.
func (o *Ops) open(path string) (*bundle.Bundle, error) {
	b, err := bundle.Open(path, o.cfg.AllowedRoots, o.cfg.Limits)
	if err != nil {
		return nil, err
	}
	b.Cache = o.cfg.Cache.ForRoot(b.Root)
	return b, nil
}

func (o *Ops) newStore(b *bundle.Bundle) *store.Store {
	lim := store.Limits{MaxFiles: o.cfg.Limits.MaxFiles, MaxFileBytes: o.cfg.Limits.MaxFileBytes, MaxDepth: o.cfg.Limits.MaxDepth}
	return store.New(b.Root, store.Options{Hook: o.cfg.StoreHook, Limits: lim, Cache: o.cfg.Cache})
}
