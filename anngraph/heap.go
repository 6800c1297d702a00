package anngraph

import (
	"iter"

	"streamer/internal/heap"
)

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

// nearHeap holds candidates nearest first and farHeap farthest first, both
// in closer's order, as heap.Pairs of a distance and a slot, which the
// compiler compares inline; farHeap holds them negated. The zero value of
// either is an empty heap.
type (
	nearHeap struct{ p heap.Pairs[float64, int32] }
	farHeap  struct{ p heap.Pairs[float64, int32] }
)

func (h *nearHeap) len() int         { return h.p.Len() }
func (h *nearHeap) reset()           { h.p.Reset() }
func (h *nearHeap) push(c cand)      { h.p.Push(c.d, c.id) }
func (h *nearHeap) top() cand        { d, id := h.p.Top(); return cand{d, id} }
func (h *nearHeap) pop() cand        { d, id := h.p.Pop(); return cand{d, id} }
func (h *farHeap) len() int          { return h.p.Len() }
func (h *farHeap) reset()            { h.p.Reset() }
func (h *farHeap) push(c cand)       { h.p.Push(-c.d, -c.id) }
func (h *farHeap) top() cand         { d, id := h.p.Top(); return cand{-d, -id} }
func (h *farHeap) pop() cand         { d, id := h.p.Pop(); return cand{-d, -id} }
func (h *farHeap) replaceTop(c cand) { h.p.ReplaceTop(-c.d, -c.id) }

// all yields the candidates in no useful order.
func (h *farHeap) all() iter.Seq[cand] {
	return func(yield func(cand) bool) {
		for d, id := range h.p.All() {
			if !yield(cand{-d, -id}) {
				return
			}
		}
	}
}

// nearest makes h hold the n nearest of found: the farthest kept on top,
// to be replaced by any nearer one.
func nearest(h *farHeap, found []cand, n int) {
	h.reset()
	for _, c := range found {
		if h.len() < n {
			h.push(c)
		} else if closer(c, h.top()) {
			h.replaceTop(c)
		}
	}
}
