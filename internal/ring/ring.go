package ring

// Ring keeps the newest Cap items it is given: once full, each item
// takes the place of the oldest. The zero Ring keeps nothing. It is not
// safe for concurrent use.
type Ring[T any] struct {
	items []T
	next  int // the oldest item's index, once full
	limit int
}

// New returns an empty ring of the newest limit items (none for limit 0
// or less).
func New[T any](limit int) Ring[T] { return Ring[T]{limit: max(0, limit)} }

// Cap returns how many items the ring keeps at most.
func (r *Ring[T]) Cap() int { return r.limit }

// Len returns how many items the ring holds.
func (r *Ring[T]) Len() int { return len(r.items) }

// Add keeps x, dropping the oldest item when the ring is full.
func (r *Ring[T]) Add(x T) {
	switch {
	case r.limit == 0:
	case len(r.items) < r.limit:
		r.items = append(r.items, x)
	default:
		r.items[r.next] = x
		r.next = (r.next + 1) % r.limit
	}
}

// Items returns a copy of the items, oldest first.
func (r *Ring[T]) Items() []T { return r.Newest(len(r.items)) }

// Newest returns a copy of the newest n items (all of them when the ring
// holds fewer), oldest first.
func (r *Ring[T]) Newest(n int) []T {
	n = min(max(0, n), len(r.items))
	out := make([]T, 0, n)
	start := len(r.items) - n // the first wanted, counted from the oldest
	if first := r.next + start; first < len(r.items) {
		out = append(out, r.items[first:]...)
		return append(out, r.items[:r.next]...)
	}
	return append(out, r.items[r.next+start-len(r.items):r.next]...)
}

// Reset empties the ring and adds items, oldest first: the newest Cap of
// them stay.
func (r *Ring[T]) Reset(items []T) {
	r.items, r.next = r.items[:0], 0
	for _, x := range items[max(0, len(items)-r.limit):] {
		r.Add(x)
	}
}

// All calls yield with each item, in no particular order, until it
// returns false.
func (r *Ring[T]) All(yield func(T) bool) {
	for _, x := range r.items {
		if !yield(x) {
			return
		}
	}
}
