package online

// minHeap hands out items least first, by a strict order less: a partial
// sort for the loops that stop after the first few (label switching, the
// exact line search). Building it costs O(n) and each pop O(log n), where
// sorting cost O(n log n) for loops that mostly took a handful: the sorts
// were 3.6% of a two-core TSVM solve, all of it on one core.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

// newMinHeap arranges items (in place) into a heap.
func newMinHeap[T any](items []T, less func(a, b T) bool) minHeap[T] {
	h := minHeap[T]{items: items, less: less}
	for i := len(items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h
}

// len returns the number of items left.
func (h *minHeap[T]) len() int { return len(h.items) }

// pop removes and returns the least item; the heap must not be empty.
func (h *minHeap[T]) pop() T {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down(0)
	return top
}

func (h *minHeap[T]) down(i int) {
	n := len(h.items)
	for {
		least := i
		if l := 2*i + 1; l < n && h.less(h.items[l], h.items[least]) {
			least = l
		}
		if r := 2*i + 2; r < n && h.less(h.items[r], h.items[least]) {
			least = r
		}
		if least == i {
			return
		}
		h.items[i], h.items[least] = h.items[least], h.items[i]
		i = least
	}
}
