package safefs

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// WalkParallel is Walk spread over workers goroutines, one directory at a
// time each. fn may run concurrently and entries arrive in no particular
// order; callers that need an order sort afterwards. The first error (a
// symlink, special file, exceeded depth, or fn's own) stops the walk.
func (r *Root) WalkParallel(opt WalkOptions, workers int, fn func(Entry) error) error {
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = 64
	}
	if workers < 1 {
		workers = 1
	}
	fd, err := unix.Dup(r.FD())
	if err != nil {
		return &PathError{Code: CodeIO, Err: err}
	}
	unix.CloseOnExec(fd)

	type dirJob struct {
		fd    int
		rel   string
		depth int
	}
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		queue    = []dirJob{{fd: fd}}
		active   = 0
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cond.Broadcast()
	}
	process := func(j dirJob) {
		defer unix.Close(j.fd)
		if opt.OnDir != nil {
			if err := opt.OnDir(j.fd); err != nil {
				fail(err)
				return
			}
		}
		names, err := readNames(j.fd)
		if err != nil {
			fail(&PathError{Code: CodeIO, Rel: j.rel, Err: err})
			return
		}
		var subdirs []dirJob
		defer func() {
			mu.Lock()
			if firstErr != nil {
				for _, s := range subdirs {
					unix.Close(s.fd)
				}
			} else {
				queue = append(queue, subdirs...)
			}
			mu.Unlock()
			cond.Broadcast()
		}()
		for _, name := range names {
			if opt.SkipHidden && name[0] == '.' {
				continue
			}
			child := name
			if j.rel != "" {
				child = j.rel + "/" + name
			}
			var st unix.Stat_t
			if err := unix.Fstatat(j.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if err == unix.ENOENT {
					continue
				}
				fail(&PathError{Code: CodeIO, Rel: child, Err: err})
				return
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFLNK:
				fail(&PathError{Code: CodeSymlink, Rel: child})
				return
			case unix.S_IFDIR:
				if j.depth+1 > opt.MaxDepth {
					fail(&PathError{Code: CodeTooLarge, Rel: child, Err: ErrTooDeep})
					return
				}
				sub, err := openDirAt(j.fd, name)
				if err != nil {
					fail(relErr(err, child))
					return
				}
				subdirs = append(subdirs, dirJob{fd: sub, rel: child, depth: j.depth + 1})
			case unix.S_IFREG:
				if err := fn(Entry{Rel: child, Stat: st}); err != nil {
					fail(err)
					return
				}
			default:
				fail(&PathError{Code: CodeNotRegular, Rel: child})
				return
			}
		}
	}

	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && active > 0 && firstErr == nil {
					cond.Wait()
				}
				if firstErr != nil || (len(queue) == 0 && active == 0) {
					for _, j := range queue {
						unix.Close(j.fd)
					}
					queue = nil
					mu.Unlock()
					cond.Broadcast()
					return
				}
				j := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				active++
				mu.Unlock()
				process(j)
				mu.Lock()
				active--
				mu.Unlock()
				cond.Broadcast()
			}
		}()
	}
	wg.Wait()
	if errors.Is(firstErr, ErrStop) {
		return nil
	}
	return firstErr
}
