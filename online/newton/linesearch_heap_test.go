package newton

import (
	"math/rand/v2"
	"slices"
	"testing"

	"streamer/internal/heap"
)

// TestMinHeapPopsInOrder: popping a heap of breakpoints, many of them
// tied in δ, gives the order of a sort by (δ, term), for every size up to
// 70 and a few larger.
func TestMinHeapPopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	sizes := []int{1000, 4097}
	for n := range 71 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		bps := make([]breakpoint, n)
		for k := range bps {
			bps[k] = breakpoint{delta: float64(r.IntN(5)), term: r.IntN(3 * (n + 1))}
		}
		want := slices.Clone(bps)
		slices.SortStableFunc(want, func(a, b breakpoint) int {
			switch {
			case a.before(b):
				return -1
			case b.before(a):
				return 1
			}
			return 0
		})
		h := heap.New(bps, breakpoint.before)
		for k := range want {
			if got := h.Pop(); got.delta != want[k].delta || got.term != want[k].term {
				t.Fatalf("n %d: pop %d gave %+v, want %+v", n, k, got, want[k])
			}
		}
		if h.Len() != 0 {
			t.Fatalf("n %d: %d left after %d pops", n, h.Len(), n)
		}
	}
}
