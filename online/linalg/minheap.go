package linalg

import "container/heap"

// MinHeap hands out items least first, by a strict order less: a partial
// sort for the loops that stop after the first few (label switching, the
// exact line search). Building it costs O(n) and each pop O(log n), where
// sorting costs O(n log n) for loops that mostly take a handful, and runs
// on one core while the products run on all. It adapts a slice to
// container/heap; items[0] is the least item.
type MinHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

// NewMinHeap arranges items (in place) into a heap.
func NewMinHeap[T any](items []T, less func(a, b T) bool) *MinHeap[T] {
	h := &MinHeap[T]{items: items, less: less}
	heap.Init(h)
	return h
}

// Min returns the least item without removing it; the heap must not be
// empty.
func (h *MinHeap[T]) Min() T { return h.items[0] }

// PopMin removes and returns the least item; the heap must not be empty.
func (h *MinHeap[T]) PopMin() T { return heap.Pop(h).(T) }

// Len (the number of items left), Less, Swap, Push and Pop implement heap.Interface.
func (h *MinHeap[T]) Len() int           { return len(h.items) }
func (h *MinHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *MinHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *MinHeap[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *MinHeap[T]) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}
