package anngraph

import (
	"cmp"
	"slices"
	"sync"

	"streamer/internal/heap"
	"streamer/vector"
)

// layers is the window's HNSW graph as Snapshot found it, in the view's
// rows, so that a view is searched as the window is, without the
// window's lock and whatever the window does next.
type layers struct {
	m      int   // links a point keeps on an upper layer: the upper layers' ef
	entry  int32 // row of the entry point
	top    int   // its level
	start0 []int32
	links0 []int32             // row i's layer-0 links: links0[start0[i]:start0[i+1]]
	upper  map[int32][][]int32 // row → its links on layers 1, 2, …
}

// copyLayers copies the graph's links into rows, row[slot] giving each
// live slot's row. The caller holds the window's lock.
func (w *Window) copyLayers(n int) *layers {
	h := w.graph
	if h == nil || h.entry < 0 {
		return nil
	}
	ly := &layers{m: h.m, entry: w.row[h.entry], top: h.top, start0: make([]int32, 1, n+1), upper: map[int32][][]int32{}}
	ly.links0 = make([]int32, 0, n*h.m)
	for s := w.head; s >= 0; s = w.next[s] {
		out, _ := h.links(s, 0)
		for _, e := range out {
			ly.links0 = append(ly.links0, w.row[e])
		}
		ly.start0 = append(ly.start0, int32(len(ly.links0)))
		level := int(h.nodes[s].level)
		if level == 0 {
			continue
		}
		up := make([][]int32, level)
		for l := 1; l <= level; l++ {
			out, _ := h.links(s, l)
			up[l-1] = make([]int32, len(out))
			for i, e := range out {
				up[l-1][i] = w.row[e]
			}
		}
		ly.upper[w.row[s]] = up
	}
	return ly
}

// links returns row r's links on layer l.
func (ly *layers) links(r int32, l int) []int32 {
	if l == 0 {
		return ly.links0[ly.start0[r]:ly.start0[r+1]]
	}
	up := ly.upper[r]
	if l > len(up) {
		return nil
	}
	return up[l-1]
}

// viewSearch is the scratch of one search of a view.
type viewSearch struct {
	marks []uint32 // visit epoch by row
	epoch uint32
	cands heap.Pairs[float64, int32] // nearest first
	res   heap.Pairs[float64, int32] // farthest first: negated distances
	found []Neighbor
	query []float32 // a dense query's float32 row
}

// Search returns the k rows of the view nearest q, nearest first, with
// their distances in the Metric's units. It searches the window's HNSW
// graph as Snapshot copied it, with ef candidates on the bottom layer (at
// least k; 0 means Config.EfSearch), or compares q with every row in a
// view of an exhaustive window. It returns nil when q is not of the
// rows' kind (dense against sparse, or dense of another length). It is
// safe for concurrent use.
func (v *View) Search(q vector.Vector, k, ef int) []Neighbor {
	if v.Len() == 0 || k <= 0 || !v.sameKind(q) {
		return nil
	}
	qsq := q.SquaredNorm()
	exact := func(r int32) float64 { return v.distance(qsq, v.sq[r], vector.Dot(q, v.vecs[r])) }
	if v.layers == nil {
		return v.bruteSearch(k, exact)
	}
	if ef <= 0 {
		ef = v.efSearch
	}
	s, _ := v.searches.Get().(*viewSearch)
	if s == nil {
		s = &viewSearch{marks: make([]uint32, v.Len())}
	}
	defer v.searches.Put(s)
	dist := exact
	if v.f32 != nil {
		s.query = slices.Grow(s.query[:0], v.stride)[:v.stride]
		clear(s.query)
		for i, x := range q.Values {
			s.query[i] = float32(x)
		}
		dist = func(r int32) float64 {
			i := int(r) * v.stride
			return v.distance(qsq, v.sq[r], float64(dotF32(s.query, v.f32[i:i+v.stride])))
		}
	}
	ly := v.layers
	entries := []Neighbor{{Row: int(ly.entry), Distance: dist(ly.entry)}}
	for l := ly.top; l > 0; l-- {
		entries = append(entries[:0], s.searchLayer(ly, entries, ly.m, l, dist)...)
	}
	found := slices.Clone(s.searchLayer(ly, entries, max(ef, k), 0, dist))
	if v.f32 == nil {
		return found[:min(k, len(found))]
	}
	// The float32 distances order the search; the k nearest are reported
	// at their exact distances.
	for i := range found {
		found[i].Distance = exact(int32(found[i].Row))
	}
	slices.SortFunc(found, cmpNeighbor)
	return found[:min(k, len(found))]
}

func cmpNeighbor(a, b Neighbor) int {
	return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.Row, b.Row))
}

// searchLayer returns the ef rows nearest the query found on layer l from
// the entries, nearest first, in s.found.
func (s *viewSearch) searchLayer(ly *layers, entries []Neighbor, ef, l int, dist func(int32) float64) []Neighbor {
	s.epoch++
	if s.epoch == 0 {
		clear(s.marks)
		s.epoch = 1
	}
	s.cands.Reset()
	s.res.Reset()
	for _, e := range entries {
		r := int32(e.Row)
		if s.marks[r] == s.epoch {
			continue
		}
		s.marks[r] = s.epoch
		s.cands.Push(e.Distance, r)
		s.push(e.Distance, r, ef)
	}
	for s.cands.Len() > 0 {
		d, c := s.cands.Pop()
		if s.full(ef) && d > s.farthest() {
			break
		}
		for _, e := range ly.links(c, l) {
			if s.marks[e] == s.epoch {
				continue
			}
			s.marks[e] = s.epoch
			de := dist(e)
			if s.full(ef) && de >= s.farthest() {
				continue
			}
			s.push(de, e, ef)
			s.cands.Push(de, e)
		}
	}
	n := s.res.Len()
	s.found = slices.Grow(s.found[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		d, r := s.res.Pop()
		s.found[i] = Neighbor{Row: int(-r), Distance: -d}
	}
	return s.found
}

// push adds row r at distance d to the results, the farthest leaving when
// they are more than ef. Results are kept negated, farthest on top, ties
// by the larger row.
func (s *viewSearch) push(d float64, r int32, ef int) {
	switch {
	case s.res.Len() < ef:
		s.res.Push(-d, -r)
	case d < s.farthest():
		s.res.ReplaceTop(-d, -r)
	}
}

// full reports whether the results hold ef rows.
func (s *viewSearch) full(ef int) bool { return s.res.Len() >= ef }

// farthest returns the distance of the farthest result; there must be one.
func (s *viewSearch) farthest() float64 {
	d, _ := s.res.Top()
	return -d
}

// bruteSearch compares the query with every row.
func (v *View) bruteSearch(k int, dist func(int32) float64) []Neighbor {
	all := make([]Neighbor, v.Len())
	for r := range all {
		all[r] = Neighbor{Row: r, Distance: dist(int32(r))}
	}
	slices.SortFunc(all, cmpNeighbor)
	return all[:min(k, len(all))]
}

// sameKind reports whether q can be compared with the view's rows.
func (v *View) sameKind(q vector.Vector) bool {
	x := v.vecs[0]
	if q.IsDense() != x.IsDense() {
		return false
	}
	return !q.IsDense() || len(q.Values) == len(x.Values)
}

// newSearches returns the pool of a view's search scratch. It has no New,
// so that two views of the same window compare equal (reflect.DeepEqual)
// until they are searched.
func newSearches() *sync.Pool { return &sync.Pool{} }
