package service

import (
	"testing"
	"time"
)

// TestSolvePauseBoundsTheShare: over a solve and the pause after it, the
// solve takes the share of the time, whatever it lasted.
func TestSolvePauseBoundsTheShare(t *testing.T) {
	for _, busy := range []time.Duration{time.Millisecond, 340 * time.Millisecond, 7 * time.Second} {
		for _, share := range []float64{0.1, 0.25, 0.5, 0.9} {
			pause := solvePause(busy, share)
			if got := float64(busy) / float64(busy+pause); got < share-1e-6 || got > share+1e-6 {
				t.Errorf("busy %v, share %v: pause %v gives a share of %v", busy, share, pause, got)
			}
		}
	}
	if p := solvePause(time.Second, 1); p != 0 {
		t.Errorf("share 1: pause %v, want none", p)
	}
}
