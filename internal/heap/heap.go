package heap

// Heap holds items least first by less, a strict weak order: less(a, b)
// reports whether a goes before b. Items that tie come out in an order
// fixed by the sequence of calls, the same on every run.
//
// A Heap is a value holding a slice: make it with New, keep it in one
// variable or field, and call its methods there; a copy shares the items
// until either grows. The zero Heap has no order and must not be used.
// Every comparison is a call through less, which the compiler does not
// inline: Pop and ReplaceTop make about one a level.
type Heap[T any] struct {
	items []T
	less  func(a, b T) bool
}

// New arranges items into a heap in place, in O(n), and returns it; the
// heap owns items from then on. items may be empty or nil.
func New[T any](items []T, less func(a, b T) bool) Heap[T] {
	h := Heap[T]{items: items, less: less}
	for i := len(items)/2 - 1; i >= 0; i-- {
		h.heapify(i)
	}
	return h
}

// Len returns the number of items.
func (h *Heap[T]) Len() int { return len(h.items) }

// Top returns the least item, leaving it in place; the heap must not be
// empty.
func (h *Heap[T]) Top() T { return h.items[0] }

// Items returns the items in heap order (the least first, the others in
// no useful order), for a caller that wants them all; they are the heap's,
// valid until its next change.
func (h *Heap[T]) Items() []T { return h.items }

// Push adds x in O(log n).
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	h.climb(len(h.items)-1, 0, x)
}

// Pop removes and returns the least item in O(log n); the heap must not
// be empty.
func (h *Heap[T]) Pop() T {
	s := h.items
	top, last := s[0], len(s)-1
	x := s[last]
	var zero T
	s[last] = zero // a popped pointer is not kept alive
	h.items = s[:last]
	if last > 0 {
		h.fill(0, x)
	}
	return top
}

// ReplaceTop replaces the least item by x, which may be the same item
// changed since (a source whose next record is now its head): a Pop and a
// Push in one pass, O(log n). The heap must not be empty.
func (h *Heap[T]) ReplaceTop(x T) { h.fill(0, x) }

// fill puts x in the hole at i, whose subtree is otherwise in order: the
// hole goes down to a leaf along the lesser children, one comparison a
// level, and x climbs back from there (Floyd's bottom-up sift). x mostly
// belongs near the bottom (a popped heap's last item, a search's new
// candidate), where this costs about half the comparisons of sifting x
// down from the top; they are calls through less, which the compiler
// cannot inline.
func (h *Heap[T]) fill(i int, x T) {
	h.climb(h.sink(i), i, x)
}

// sink moves the hole at i down to a leaf, along the lesser children, and
// returns the leaf. It is a function of its own so that little is live
// across each call to less.
func (h *Heap[T]) sink(i int) int {
	s, less := h.items, h.less
	for {
		c := 2*i + 1
		if c >= len(s) {
			return i
		}
		if r := c + 1; r < len(s) && less(s[r], s[c]) {
			c = r
		}
		s[i] = s[c]
		i = c
	}
}

// climb puts x in the hole at i, moving the hole towards the top, but not
// above top, while x goes before the item above it: a hole carried up
// rather than x swapped at every level.
func (h *Heap[T]) climb(i, top int, x T) {
	s, less := h.items, h.less
	for i > top {
		p := (i - 1) / 2
		if !less(x, s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = x
}

// heapify orders the subtree at i, whose subtrees are in order.
func (h *Heap[T]) heapify(i int) { h.fill(i, h.items[i]) }
