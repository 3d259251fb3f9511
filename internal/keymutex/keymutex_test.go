package keymutex

import (
	"context"
	"errors"
	"testing"
)

func TestMap(t *testing.T) {
	k := New()
	ctx := context.Background()
	unlockA, err := k.Lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("another key is free", func(t *testing.T) {
		unlockB, err := k.Lock(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		unlockB()
	})
	t.Run("a held key waits, and the wait can be cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := k.Lock(cctx, "a"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock of a held key with a cancelled context: %v", err)
		}
	})
	t.Run("unlocking hands the key to a waiter", func(t *testing.T) {
		got := make(chan func())
		go func() {
			u, err := k.Lock(ctx, "a")
			if err != nil {
				t.Error(err)
			}
			got <- u
		}()
		unlockA()
		unlockA() // twice is once
		(<-got)()
	})
	t.Run("nothing is kept for keys nobody holds", func(t *testing.T) {
		if n := k.len(); n != 0 {
			t.Errorf("%d keys kept", n)
		}
	})
}

// len is how many keys are held or waited for.
func (k *Map) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}
