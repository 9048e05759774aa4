// Package bundle opens OKF bundles under the path policy and reads them:
// concept ids, bounded and ordered scans, and version resolution. It never
// writes; writes go through package store.
package bundle

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// Limits are the explicit bounds of every bundle operation. Exceeding one is
// a RESOURCE_LIMIT error, never a silent truncation (hits and problems are
// reported as truncated instead).
type Limits struct {
	MaxFiles            int   // visible files in a bundle
	MaxFileBytes        int64 // bytes in one file
	MaxFrontmatterBytes int   // bytes of one frontmatter block
	MaxDepth            int   // directory nesting below the root
	MaxHits             int   // search hits returned
	MaxProblems         int   // validation problems returned
}

// DefaultLimits suit bundles of up to 50,000 files.
var DefaultLimits = Limits{
	MaxFiles: 50_000, MaxFileBytes: 1 << 20, MaxFrontmatterBytes: 64 << 10,
	MaxDepth: 32, MaxHits: 200, MaxProblems: 1000,
}

// Doc returns the document parser's limits for these bundle limits.
func (l Limits) Doc() doc.Limits {
	return doc.Limits{MaxFrontmatterBytes: l.MaxFrontmatterBytes, MaxDepth: doc.DefaultLimits.MaxDepth, MaxNodes: doc.DefaultLimits.MaxNodes}
}

// Bundle is an open bundle root.
type Bundle struct {
	Root   *safefs.Root
	Limits Limits
	// Cache, when set, is the manifest cache of this root (see ScanCached).
	Cache *filecache.Bundle
}

// Open checks bundle_path against the policy (absolute, clean, inside one
// of allowed when any are configured) before touching the disk, then opens
// it symlink-free.
func Open(path string, allowed []string, lim Limits) (*Bundle, error) {
	if err := safefs.CheckPath(path); err != nil {
		return nil, PathErr(err)
	}
	if len(allowed) > 0 && !Within(path, allowed) {
		return nil, domainerr.New(domainerr.PathRejected, "bundle_path is outside the bundle roots this server allows").
			WithDetails(map[string]any{"reason": "outside_allowed_roots"})
	}
	root, err := safefs.Open(path)
	if err != nil {
		return nil, PathErr(err)
	}
	return &Bundle{Root: root, Limits: lim}, nil
}

// Within reports whether path is one of roots or below one of them.
func Within(path string, roots []string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// CheckRoots validates operator-configured allowed roots.
func CheckRoots(roots []string) error {
	for _, r := range roots {
		if !filepath.IsAbs(r) || filepath.Clean(r) != r {
			return errors.New("every OKF bundle root must be an absolute, clean path")
		}
	}
	return nil
}

// Close releases the root.
func (b *Bundle) Close() error { return b.Root.Close() }

// PathErr maps a safefs error to a domain error; other errors pass through.
func PathErr(err error) error {
	var pe *safefs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	details := map[string]any{"reason": pe.Code}
	if pe.Rel != "" {
		details["path"] = pe.Rel
	}
	switch pe.Code {
	case safefs.CodeNotFound:
		if pe.Rel == "" {
			return domainerr.New(domainerr.PathRejected, "%s", pe.Error()).WithDetails(details)
		}
		return domainerr.New(domainerr.NotFound, "%s", pe.Error()).WithDetails(details)
	case safefs.CodeTooLarge:
		if errors.Is(err, safefs.ErrTooDeep) {
			return domainerr.New(domainerr.ResourceLimit, "%s", "directory nesting exceeds the depth limit").
				WithDetails(map[string]any{"limit": "max_depth", "path": pe.Rel})
		}
		return domainerr.New(domainerr.ResourceLimit, "%s", pe.Error()).WithDetails(map[string]any{"limit": "max_file_bytes", "path": pe.Rel})
	case safefs.CodeIO:
		return domainerr.New(domainerr.Internal, "%s", pe.Error())
	case safefs.CodeBadPath:
		return domainerr.New(domainerr.InvalidArgument, "%s", pe.Error()).WithDetails(details)
	}
	return domainerr.New(domainerr.PathRejected, "%s", pe.Error()).WithDetails(details)
}
