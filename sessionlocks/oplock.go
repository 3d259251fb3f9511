package sessionlocks

// The CLI's operation lock: session-state/.session-operation-locks/<id>.lock,
// which a CLI holds (flock LOCK_EX) while it opens a session and retries
// every ~27 ms while someone else holds it. A mutation that holds it knows
// no CLI is opening the session.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

const opLockDir = ".session-operation-locks"

// lockSession takes this process's mutex of session id, then the CLI's
// operation lock on it: a mutation holds both.
func (e *Engine) lockSession(ctx context.Context, id string) (release func(), err error) {
	unlock, err := e.locks.Lock(ctx, id)
	if err != nil {
		return nil, err
	}
	if e.beforeOpLock != nil {
		e.beforeOpLock()
	}
	opRelease, err := e.opLock(ctx, id)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() { opRelease(); unlock() }, nil
}

// opLock takes the operation lock of session id, creating its file as the
// CLI does if it is absent, retrying for up to opLockWait.
func (e *Engine) opLock(ctx context.Context, id string) (release func(), err error) {
	return e.opLockWithin(ctx, id, opLockWait)
}

func (e *Engine) opLockWithin(ctx context.Context, id string, wait time.Duration) (release func(), err error) {
	path := filepath.Join(e.dir, opLockDir, id+".lock")
	f, err := openOpLockFile(e.dir, id)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, &FileError{Op: "open", Path: path, Err: err}
	}
	deadline := time.Now().Add(wait)
	for {
		err := tryLock(f)
		if err == nil {
			return func() { unlockFile(f); f.Close() }, nil
		}
		if !errors.Is(err, errLockBusy) {
			f.Close()
			return nil, &FileError{Op: "lock", Path: path, Err: err}
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w (%s, waited %s)", ErrBusy, path, wait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// opLockWait is how long a mutation waits for the CLI's operation lock,
// which the CLI holds for milliseconds, while it opens a session.
const opLockWait = 500 * time.Millisecond
