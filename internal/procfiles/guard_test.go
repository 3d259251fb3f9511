package procfiles

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestGuardedStuckLookup: a look-up that hangs (a stuck file system) costs
// its caller only its deadline, holds back the next caller until that one's
// deadline, and is stopped between kernel calls; once it returns, look-ups
// run again.
func TestGuardedStuckLookup(t *testing.T) {
	release := make(chan struct{})
	stopped := make(chan error, 1)
	stuck := func(ctx context.Context) (int, error) {
		<-release // a kernel call that does not return
		stopped <- ctx.Err()
		return 1, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := guarded(ctx, stuck); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the stuck look-up's caller got %v, want its deadline", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	ran := false
	if _, err := guarded(ctx2, func(context.Context) (int, error) { ran = true; return 2, nil }); !errors.Is(err, ErrBusy) || ran {
		t.Fatalf("a look-up behind a stuck one: ran %v, err %v; want ErrBusy without running", ran, err)
	}
	close(release)
	if err := <-stopped; err == nil {
		t.Error("the stuck look-up's context was not cancelled when its caller gave up")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := guarded(context.Background(), func(context.Context) (int, error) { return 3, nil })
		if err == nil && v == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("look-ups do not run again after the stuck one returned: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGuardedAnswer(t *testing.T) {
	want := errors.New("no such process")
	if v, err := guarded(context.Background(), func(context.Context) (string, error) { return "x", want }); v != "x" || err != want {
		t.Errorf("guarded = %q, %v; want the look-up's own answer", v, err)
	}
}
