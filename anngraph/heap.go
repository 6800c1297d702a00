package anngraph

import "streamer/internal/heap"

// cand is a point and its internal distance to some base point.
type cand struct {
	d  float64
	id int32
}

// closer orders candidates by distance, then by slot, so that every order
// the package makes is total and so deterministic.
func closer(a, b cand) bool {
	return a.d < b.d || a.d == b.d && a.id < b.id
}

// farther is closer reversed: a heap by farther has the farthest on top.
// It is written out rather than calling closer: a heap calls it through a
// function value, which the compiler cannot inline.
func farther(a, b cand) bool {
	return a.d > b.d || a.d == b.d && a.id > b.id
}

// nearest makes h, a heap by farther, hold the n nearest of found: the
// farthest kept on top, to be replaced by any nearer one.
func nearest(h *heap.Heap[cand], found []cand, n int) {
	h.Reset()
	for _, c := range found {
		if h.Len() < n {
			h.Push(c)
		} else if closer(c, h.Top()) {
			h.ReplaceTop(c)
		}
	}
}
