package bundle

import (
	"context"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/notebridge/notebridge/pkg/internal/statkey"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// File is one visible regular file of the bundle.
type File struct {
	Rel  string
	ID   string // concept id, "" for index.md, log.md and non-Markdown files
	Size int64
	Key  statkey.Key // stat of the listing, for the manifest cache
}

// Files lists the visible files in path order (hidden entries and .okf/
// are skipped). A symlink or special file is PATH_REJECTED; more files than
// MaxFiles or deeper nesting than MaxDepth is RESOURCE_LIMIT.
func (b *Bundle) Files(ctx context.Context) ([]File, error) {
	if v, ok := b.Cache.Listing(); ok {
		return slices.Clone(v.([]File)), nil
	}
	var (
		mu  sync.Mutex
		out []File
	)
	opt := safefs.WalkOptions{MaxDepth: b.Limits.MaxDepth, SkipHidden: true}
	w := b.Cache.WatchForListing(b.Root.FD())
	if w != nil {
		// A directory the watch cannot follow only makes the listing
		// unreusable; the walk itself goes on.
		opt.OnDir = func(fd int) error { _ = w.AddDir(fd); return nil }
	}
	err := b.Root.WalkParallel(opt, scanWorkers, func(e safefs.Entry) error {
		mu.Lock()
		defer mu.Unlock()
		if len(out) >= b.Limits.MaxFiles {
			return domainerr.New(domainerr.ResourceLimit, "the bundle has more than %d files", b.Limits.MaxFiles).
				WithDetails(map[string]any{"limit": "max_files", "value": b.Limits.MaxFiles})
		}
		if len(out)%1024 == 0 && ctx.Err() != nil {
			return domainerr.Retryable(domainerr.Cancelled, "the scan was cancelled")
		}
		out = append(out, File{Rel: e.Rel, ID: IDOf(e.Rel), Size: e.Stat.Size, Key: statkey.Of(&e.Stat)})
		return nil
	})
	if err != nil {
		if w != nil {
			w.Close()
		}
		return nil, PathErr(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	b.Cache.Retain(func(rel string) bool {
		i := sort.Search(len(out), func(i int) bool { return out[i].Rel >= rel })
		return i < len(out) && out[i].Rel == rel
	})
	b.Cache.SetListing(slices.Clone(out), w)
	return out, nil
}

// Parsed is one concept read by a scan. Exactly one of Doc and Err is set;
// Err is a *doc.ParseError for a malformed document, or a domain error
// (size limit, symlink swapped in) for one that could not be read.
type Parsed struct {
	File File
	Doc  *doc.Document
	Err  error
}

// ScanMode says how much of each concept a scan reads.
type ScanMode int

// Scan modes.
const (
	FrontmatterOnly ScanMode = iota // stop reading at the closing fence
	WholeFile                       // read the body too (bounded by MaxFileBytes)
)

// Scan parses the given concept files on a few workers and calls fn for each
// in input order. Only a window of results is held at once. fn returning an
// error stops the scan with that error.
func (b *Bundle) Scan(ctx context.Context, files []File, mode ScanMode, fn func(Parsed) error) error {
	workers := scanWorkers
	const window = 256
	lim := b.Limits.Doc()
	for start := 0; start < len(files); start += window {
		if ctx.Err() != nil {
			return domainerr.Retryable(domainerr.Cancelled, "the scan was cancelled")
		}
		batch := files[start:min(start+window, len(files))]
		results := make([]Parsed, len(batch))
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					results[i], _, _ = b.parseKeyed(batch[i], mode, lim)
				}
			}()
		}
		for i := range batch {
			next <- i
		}
		close(next)
		wg.Wait()
		for _, r := range results {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadConcept reads one concept file whole. It reads nothing else.
func (b *Bundle) ReadConcept(id string) (*doc.Document, []byte, error) {
	rel, err := ConceptPath(id)
	if err != nil {
		return nil, nil, err
	}
	raw, err := b.Root.ReadFile(rel, b.Limits.MaxFileBytes)
	if err != nil {
		if safefs.IsCode(err, safefs.CodeNotFound) {
			return nil, nil, domainerr.New(domainerr.NotFound, "concept %q does not exist", id)
		}
		return nil, nil, PathErr(err)
	}
	lim := b.Limits.Doc()
	d, err := doc.Parse(raw, lim)
	return d, raw, err
}

// scanWorkers is how many files a scan opens and parses at once. It is
// above the CPU count on purpose: on a cold page cache each worker mostly
// waits for the disk.
var scanWorkers = max(8, 2*runtime.GOMAXPROCS(0))
