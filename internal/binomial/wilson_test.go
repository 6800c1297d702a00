package binomial

import (
	"math"
	"testing"
)

// TestWilsonUpperBoundsTheShare: the upper end lies above the observed
// share, shrinks towards it as the trials grow, and is 1 for all right.
func TestWilsonUpperBoundsTheShare(t *testing.T) {
	prev := 1.0
	for _, n := range []int{4, 16, 64, 256, 1024} {
		right := n * 3 / 4
		_, u := Wilson(right, n, 1)
		if u <= 0.75 || u >= prev {
			t.Errorf("%d of %d: upper end %v, want in (0.75, %v)", right, n, u, prev)
		}
		prev = u
	}
	if _, u := Wilson(7, 7, 1); math.Abs(u-1) > 1e-12 {
		t.Errorf("7 of 7: upper end %v, want 1", u)
	}
}
