package rpc

import (
	"testing"
	"time"
)

func TestWireTime(t *testing.T) {
	if got := wireTime(time.Time{}); got != "" {
		t.Errorf("zero time: %q", got)
	}
	tm := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("X", 3600))
	if got := wireTime(tm); got != "2026-01-02T02:04:05.006Z" {
		t.Errorf("got %q", got)
	}
}
