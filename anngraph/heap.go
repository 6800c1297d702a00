package anngraph

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

// minHeap is a binary heap of candidates, nearest on top.
type minHeap []cand

func (h *minHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !closer(s[i], s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && closer(s[r], s[l]) {
			m = r
		}
		if !closer(s[m], s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// maxHeap is a binary heap of candidates, farthest on top.
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !closer(s[p], s[i]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.fix()
	return top
}

// fix restores the heap after its top was replaced.
func (h *maxHeap) fix() {
	s := *h
	last := len(s)
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && closer(s[l], s[r]) {
			m = r
		}
		if !closer(s[i], s[m]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// nearest appends to the empty heap h the n nearest of found, in heap
// order (farthest on top), and returns it.
func nearest(h maxHeap, found []cand, n int) maxHeap {
	for _, c := range found {
		if len(h) < n {
			h.push(c)
		} else if closer(c, h[0]) {
			h[0] = c
			h.fix()
		}
	}
	return h
}
