package online

import "container/heap"

// minHeap hands out items least first, by a strict order less: a partial
// sort for the loops that stop after the first few (label switching, the
// exact line search). Building it costs O(n) and each pop O(log n), where
// sorting cost O(n log n) for loops that mostly took a handful: the sorts
// were 3.6% of a two-core TSVM solve, all of it on one core. It adapts a
// slice to container/heap; items[0] is the least item.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

// newMinHeap arranges items (in place) into a heap.
func newMinHeap[T any](items []T, less func(a, b T) bool) *minHeap[T] {
	h := &minHeap[T]{items: items, less: less}
	heap.Init(h)
	return h
}

// pop removes and returns the least item; the heap must not be empty.
func (h *minHeap[T]) pop() T { return heap.Pop(h).(T) }

// Len (the number of items left), Less, Swap, Push and Pop implement heap.Interface.
func (h *minHeap[T]) Len() int           { return len(h.items) }
func (h *minHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *minHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *minHeap[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *minHeap[T]) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}
