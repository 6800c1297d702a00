package anngraph

import (
	"math"
	"slices"
)

// knnLists holds, by slot, each live point's list of nearest known points
// (up to depth of them, nearest first) and its reverse list: the slots whose
// lists hold it. The reverse lists make eviction exact: an evicted point is
// removed from every list that holds it, so no list ever refers to a point
// that left the window.
type knnLists struct {
	k, depth int
	nb       [][]cand  // nb[p]: p's list, ordered by closer
	rev      [][]int32 // rev[q]: the p whose lists hold q, in no order
	// bar[p] is the distance of the last entry of p's list when it is
	// full, +Inf otherwise: most offers fail, and this compact array lets
	// them fail without touching the list.
	bar []float64
}

func (kl *knnLists) grow(slot int32) {
	for int(slot) >= len(kl.nb) {
		kl.nb = append(kl.nb, nil)
		kl.rev = append(kl.rev, nil)
		kl.bar = append(kl.bar, math.Inf(1))
	}
}

func (kl *knnLists) setBar(p int32) {
	if l := kl.nb[p]; len(l) == kl.depth {
		kl.bar[p] = l[len(l)-1].d
	} else {
		kl.bar[p] = math.Inf(1)
	}
}

// offer puts q at distance d into p's list if it is among the depth nearest
// that p knows. q must not be in p's list yet.
func (kl *knnLists) offer(p, q int32, d float64) bool {
	if d > kl.bar[p] {
		return false
	}
	l := kl.nb[p]
	c := cand{d: d, id: q}
	if len(l) == kl.depth && !closer(c, l[len(l)-1]) {
		return false
	}
	if len(l) == kl.depth {
		kl.dropRev(l[len(l)-1].id, p)
		l = l[:len(l)-1]
	}
	i := len(l)
	for i > 0 && closer(c, l[i-1]) {
		i--
	}
	kl.nb[p] = slices.Insert(l, i, c)
	kl.rev[q] = append(kl.rev[q], p)
	kl.setBar(p)
	return true
}

// offerNew is offer for a q that may already be in p's list.
func (kl *knnLists) offerNew(p, q int32, d float64) bool {
	if d > kl.bar[p] {
		return false
	}
	l := kl.nb[p]
	if len(l) == kl.depth && !closer(cand{d: d, id: q}, l[len(l)-1]) {
		return false
	}
	for _, c := range l {
		if c.id == q {
			return false
		}
	}
	return kl.offer(p, q, d)
}

// dropRev removes p from q's reverse list.
func (kl *knnLists) dropRev(q, p int32) {
	kl.rev[q] = dropID(kl.rev[q], p, "reverse kNN list")
}

// dropID removes x from the unordered s, and gives back the room of a list
// that shrank to a quarter of it: hubs, which many lists hold for a while,
// would otherwise keep their longest list's room for good.
func dropID(s []int32, x int32, what string) []int32 {
	i := slices.Index(s, x)
	if i < 0 {
		panic("anngraph: " + what + " out of step")
	}
	last := len(s) - 1
	s[i] = s[last]
	s = s[:last]
	if cap(s) >= 64 && len(s) < cap(s)/4 {
		s = append(make([]int32, 0, 2*len(s)), s...)
	}
	return s
}

// remove takes slot x out of every list and clears its own. It appends to
// short the points whose lists fell below k entries and so need a repair.
func (kl *knnLists) remove(x int32, short []int32) []int32 {
	for _, p := range kl.rev[x] {
		l := kl.nb[p]
		i := slices.IndexFunc(l, func(c cand) bool { return c.id == x })
		kl.nb[p] = slices.Delete(l, i, i+1)
		kl.bar[p] = math.Inf(1)
		if len(kl.nb[p]) < kl.k {
			short = append(short, p)
		}
	}
	for _, c := range kl.nb[x] {
		kl.dropRev(c.id, x)
	}
	kl.nb[x] = kl.nb[x][:0]
	kl.rev[x] = kl.rev[x][:0]
	if cap(kl.rev[x]) > 2*kl.depth {
		kl.rev[x] = nil // the slot's next point is seldom a hub too
	}
	kl.bar[x] = math.Inf(1)
	return short
}
