package procfiles

// One look-up at a time, and no caller held by a look-up that hangs: asking
// the kernel about a descriptor stats its file, which a stuck NFS server
// can hold for minutes. At most one stuck look-up ever exists.

import (
	"context"
	"time"
)

// maxWait bounds a caller whose context has no deadline.
const maxWait = 10 * time.Second

// slot is held by the look-up in flight, until it returns.
var slot = make(chan struct{}, 1)

type result[T any] struct {
	v   T
	err error
}

// guarded runs f alone and waits for it until ctx is done or maxWait
// passes; f's context is cancelled when its caller gives up.
func guarded[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	var zero T
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel() // only once this caller is done: f's context must outlive its answer
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return zero, ErrBusy
	}
	out := make(chan result[T], 1)
	go func() {
		defer func() { <-slot }()
		v, err := f(ctx)
		out <- result[T]{v, err}
	}()
	select {
	case r := <-out:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
