package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/internal/statkey"
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/filecache"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// ScanCached is Scan for a value derived from each file. A file whose
// listing stat matches a cached entry in slot is not read; the others are
// read and parsed, derive runs on them, and the value is cached under the
// stat of the file as opened. A whole-file read also caches the file's
// digest, so a later revision need not hash it again. A file that could
// not be read (as opposed to one that does not parse) is passed to derive
// and never cached. fn gets every file's value in input order; its error
// stops the scan.
func (b *Bundle) ScanCached(ctx context.Context, files []File, mode ScanMode, slot filecache.Slot,
	derive func(Parsed) any, fn func(File, any) error) error {
	const window = 256
	lim := b.Limits.Doc()
	now := b.Cache.Now()
	vals := make([]any, window)
	var misses []int
	for start := 0; start < len(files); start += window {
		if ctx.Err() != nil {
			return domainerr.Retryable(domainerr.Cancelled, "the scan was cancelled")
		}
		batch := files[start:min(start+window, len(files))]
		misses = misses[:0]
		for i, f := range batch {
			v, ok := b.Cache.Get(f.Rel, f.Key, slot)
			vals[i] = v
			if !ok {
				misses = append(misses, i)
			}
		}
		b.fill(batch, misses, vals, mode, slot, lim, now, derive)
		for i, f := range batch {
			if err := fn(f, vals[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill reads and derives the missed files of batch on the scan workers.
func (b *Bundle) fill(batch []File, misses []int, vals []any, mode ScanMode, slot filecache.Slot,
	lim doc.Limits, now time.Time, derive func(Parsed) any) {
	if len(misses) == 0 {
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(scanWorkers, len(misses)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p, key, raw := b.parseKeyed(batch[i], mode, lim)
				vals[i] = derive(p)
				if p.Err != nil && !errors.As(p.Err, new(*doc.ParseError)) {
					continue
				}
				b.Cache.Put(p.File.Rel, key, slot, vals[i], now)
				if raw != nil && int64(len(raw)) == key.Size {
					sum := sha256.Sum256(raw)
					b.Cache.Put(p.File.Rel, key, filecache.Digest, hex.EncodeToString(sum[:]), now)
				}
			}
		}()
	}
	for _, i := range misses {
		next <- i
	}
	close(next)
	wg.Wait()
}

// parseKeyed reads and parses one file and returns the stat key of the
// file as opened and, for a whole-file read, its bytes.
func (b *Bundle) parseKeyed(f File, mode ScanMode, lim doc.Limits) (Parsed, statkey.Key, []byte) {
	if mode != WholeFile {
		fh, st, err := b.Root.OpenFile(f.Rel)
		if err != nil {
			return Parsed{File: f, Err: PathErr(err)}, statkey.Key{}, nil
		}
		defer fh.Close()
		if st.Size > b.Limits.MaxFileBytes {
			return Parsed{File: f, Err: PathErr(&safefs.PathError{Code: safefs.CodeTooLarge, Rel: f.Rel})}, statkey.Key{}, nil
		}
		d, err := doc.ParseFrontmatterOnly(fh, lim)
		return Parsed{File: f, Doc: d, Err: err}, statkey.Of(&st), nil
	}
	raw, st, err := b.Root.ReadFileStat(f.Rel, b.Limits.MaxFileBytes)
	if err != nil {
		return Parsed{File: f, Err: PathErr(err)}, statkey.Key{}, nil
	}
	d, err := doc.Parse(raw, lim)
	return Parsed{File: f, Doc: d, Err: err}, statkey.Of(&st), raw
}
