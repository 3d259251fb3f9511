package sessionlocks

// The feed of session ids a listing scans: ids arrive from the directory
// walk in batches while workers take chunks of them, so that scanning starts
// before the state dir has been read to its end.

import "sync"

// idFeed hands session ids to scan workers in chunks, in order, while they
// may still be being read from the state dir.
type idFeed struct {
	// res, found and errs hold every chunk's results, when the ids were
	// known from the start (one allocation each, not three per chunk).
	res   []Session
	found []bool
	errs  []error

	mu     sync.Mutex
	cond   sync.Cond
	ids    []string // every id added so far; complete once done
	chunks []*idChunk
	taken  int // ids handed out
	done   bool
	err    error // why reading the ids failed; set with done
}

// idChunk is a run of ids one worker scans, and what it found.
type idChunk struct {
	ids   []string
	res   []Session
	found []bool
	errs  []error
}

func newIDFeed() *idFeed {
	f := &idFeed{}
	f.cond.L = &f.mu
	return f
}

// fullFeed is a finished feed of ids.
func fullFeed(ids []string) *idFeed {
	f := newIDFeed()
	f.ids, f.done = ids, true
	f.res, f.found, f.errs = make([]Session, len(ids)), make([]bool, len(ids)), make([]error, len(ids))
	return f
}

func (f *idFeed) add(ids []string) {
	if len(ids) == 0 {
		return
	}
	f.mu.Lock()
	f.ids = append(f.ids, ids...)
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *idFeed) finish(err error) {
	f.mu.Lock()
	f.done, f.err = true, err
	f.mu.Unlock()
	f.cond.Broadcast()
}

// all is every id added so far.
func (f *idFeed) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids
}

func (f *idFeed) finished() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

// take returns the next chunk to scan, waiting for ids to arrive; nil when
// every id has been handed out and no more will come.
func (f *idFeed) take() *idChunk {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		if n := len(f.ids) - f.taken; n >= scanChunk || n > 0 && f.done {
			n = min(n, scanChunk)
			lo, hi := f.taken, f.taken+n
			c := &idChunk{ids: f.ids[lo:hi:hi]}
			if f.res != nil {
				c.res, c.found, c.errs = f.res[lo:hi:hi], f.found[lo:hi:hi], f.errs[lo:hi:hi]
			}
			f.taken = hi
			f.chunks = append(f.chunks, c)
			return c
		}
		if f.done {
			return nil
		}
		f.cond.Wait()
	}
}
