package ring

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRingKeepsTheNewest: against a slice that keeps every item, a ring
// holds the newest Cap of them, oldest first, after any number of adds
// and resets, and Newest(n) is the tail of that.
func TestRingKeepsTheNewest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, limit := range []int{0, 1, 2, 3, 7} {
		ring := New[int](limit)
		var all []int
		for step := range 300 {
			if r.IntN(40) == 0 {
				reset := make([]int, r.IntN(12))
				for i := range reset {
					reset[i] = -step*100 - i
				}
				ring.Reset(reset)
				all = slices.Clone(reset)
			} else {
				ring.Add(step)
				all = append(all, step)
			}
			want := all[max(0, len(all)-limit):]
			if got := ring.Items(); !slices.Equal(got, want) {
				t.Fatalf("cap %d, step %d: items %v, want %v", limit, step, got, want)
			}
			n := r.IntN(limit + 3)
			if got, want := ring.Newest(n), want[max(0, len(want)-n):]; !slices.Equal(got, want) {
				t.Fatalf("cap %d, step %d: newest %d %v, want %v", limit, step, n, got, want)
			}
			var seen []int
			for x := range ring.All {
				seen = append(seen, x)
			}
			slices.Sort(seen)
			if sorted := slices.Sorted(slices.Values(want)); !slices.Equal(seen, sorted) || ring.Len() != len(want) {
				t.Fatalf("cap %d, step %d: all %v, len %d; want %v", limit, step, seen, ring.Len(), sorted)
			}
		}
	}
	var zero Ring[string]
	zero.Add("x")
	if zero.Len() != 0 || zero.Cap() != 0 {
		t.Error("the zero ring kept an item")
	}
}
