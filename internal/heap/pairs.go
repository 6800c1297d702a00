package heap

import (
	"cmp"
	"iter"
)

// Pairs holds (key, value) pairs least first: by key, and pairs of equal
// keys by value. It is the heap for an order the operators can say, which
// the compiler then inlines, as it never inlines a call through Heap's
// less (BenchmarkPushPop times both): a graph search's candidates, a
// distance and a slot, are compared tens of millions of times a second.
// A descending order is the ascending one of negated keys and values. A
// key must not be NaN.
//
// Like a Heap it is a value holding a slice, kept in one variable or
// field; the zero Pairs is empty and ready to use.
type Pairs[K, V cmp.Ordered] struct {
	s []pair[K, V]
}

type pair[K, V cmp.Ordered] struct {
	k K
	v V
}

func (a pair[K, V]) before(b pair[K, V]) bool {
	return a.k < b.k || a.k == b.k && a.v < b.v
}

// Len returns the number of pairs.
func (h *Pairs[K, V]) Len() int { return len(h.s) }

// Top returns the least pair, leaving it in place; the heap must not be
// empty.
func (h *Pairs[K, V]) Top() (K, V) { return h.s[0].k, h.s[0].v }

// All yields the pairs in heap order (the least first, the others in no
// useful order); the heap must not change meanwhile.
func (h *Pairs[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for _, p := range h.s {
			if !yield(p.k, p.v) {
				return
			}
		}
	}
}

// Reset empties the heap and keeps its room, uncleared, for the next
// pairs.
func (h *Pairs[K, V]) Reset() { h.s = h.s[:0] }

// Push adds the pair (k, v) in O(log n).
func (h *Pairs[K, V]) Push(k K, v V) {
	h.s = append(h.s, pair[K, V]{k, v})
	h.climb(len(h.s)-1, pair[K, V]{k, v})
}

// Pop removes and returns the least pair in O(log n); the heap must not
// be empty.
func (h *Pairs[K, V]) Pop() (K, V) {
	s := h.s
	top, last := s[0], len(s)-1
	x := s[last]
	s[last] = pair[K, V]{} // a popped string is not kept alive
	h.s = s[:last]
	if last > 0 {
		h.climb(h.sink(0), x)
	}
	return top.k, top.v
}

// ReplaceTop replaces the least pair by (k, v): a Pop and a Push in one
// pass, O(log n). The heap must not be empty.
func (h *Pairs[K, V]) ReplaceTop(k K, v V) {
	h.climb(h.sink(0), pair[K, V]{k, v})
}

// sink and climb are Heap's, with the comparison an operator's.
func (h *Pairs[K, V]) sink(i int) int {
	s := h.s
	for {
		c := 2*i + 1
		if c >= len(s) {
			return i
		}
		if r := c + 1; r < len(s) && s[r].before(s[c]) {
			c = r
		}
		s[i] = s[c]
		i = c
	}
}

func (h *Pairs[K, V]) climb(i int, x pair[K, V]) {
	s := h.s
	for i > 0 {
		p := (i - 1) / 2
		if !x.before(s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = x
}
