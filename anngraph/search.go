package anngraph

import "slices"

// searcher is the scratch of one goroutine's searches through the graph:
// visit marks and a distance memo by slot, the candidate heaps, and the
// scatter buffers of sparse queries. The graph's searches only read the
// graph and the space, so several searchers can search it at once while
// nothing changes it (InsertBatch); one searcher, the graph's main, serves
// everything done under the window's lock.
type searcher struct {
	sp *space
	g  *hnsw // nil in an exhaustive window, which only uses the scatters

	marks      []mark
	visitEpoch uint32
	memoEpoch  uint32
	log        []cand // every distance computed to the current query
	cands      nearHeap
	res        farHeap
	near       farHeap // the nearest of an insert's distances
	layer      []cand
	entries    []cand
	sel        []cand
	batch      []int32
	distEvals  uint64

	// Scatter buffers for sparse queries: query for the point a search is
	// about, base and cand for the two sides of pairwise comparisons.
	query, base, cand scatter
	sink              float64 // keeps touch's loads
}

// mark is a slot's scratch state for the current search, in one place so
// that a visit costs one cache miss: visited by the current layer search
// when visit == visitEpoch; its distance to the current query is d when
// memo == memoEpoch.
type mark struct {
	visit, memo uint32
	d           float64
}

func newSearcher(sp *space, g *hnsw) *searcher {
	return &searcher{sp: sp, g: g}
}

// fit makes room for the graph's slots in the marks.
func (s *searcher) fit() {
	if n := len(s.g.nodes); len(s.marks) < n {
		s.marks = append(s.marks, make([]mark, n-len(s.marks))...)
	}
}

// beginQuery starts a new distance memo and log.
func (s *searcher) beginQuery() {
	s.memoEpoch++
	if s.memoEpoch == 0 {
		for i := range s.marks {
			s.marks[i].memo = 0
		}
		s.memoEpoch = 1
	}
	s.log = s.log[:0]
}

// distance returns the internal distance from the current query q to e,
// computed once per query; every computation is logged.
func (s *searcher) distance(q *point, e int32) float64 {
	mk := &s.marks[e]
	if mk.memo == s.memoEpoch {
		return mk.d
	}
	d := s.sp.distTo(q, e)
	s.distEvals++
	mk.memo, mk.d = s.memoEpoch, d
	s.log = append(s.log, cand{d: d, id: e})
	return d
}

// known reports whether the distance from the current query to e is known.
func (s *searcher) known(e int32) bool { return s.marks[e].memo == s.memoEpoch }

// memoize records d as the distance from the current query to e, unlogged.
func (s *searcher) memoize(e int32, d float64) {
	s.marks[e].memo, s.marks[e].d = s.memoEpoch, d
}

func (s *searcher) newVisit() {
	s.visitEpoch++
	if s.visitEpoch == 0 {
		for i := range s.marks {
			s.marks[i].visit = 0
		}
		s.visitEpoch = 1
	}
}

// searchLayer is the paper's SEARCH-LAYER (algorithm 2): the ef points
// nearest q found on the layer from the entries, returned in s.layer,
// nearest first. The entries' distances must be set.
func (s *searcher) searchLayer(q *point, entries []cand, ef, level int) []cand {
	h := s.g
	s.newVisit()
	s.cands.reset()
	s.res.reset()
	for _, e := range entries {
		if s.marks[e.id].visit == s.visitEpoch {
			continue
		}
		s.marks[e.id].visit = s.visitEpoch
		s.cands.push(e)
		s.res.push(e)
		if s.res.len() > ef {
			s.res.pop()
		}
	}
	for s.cands.len() > 0 {
		c := s.cands.pop()
		if s.res.len() == ef && closer(s.res.top(), c) {
			break
		}
		if level == 0 && s.cands.len() > 0 {
			// The next candidate's links, likely the next to be read,
			// load while this one's distances are computed.
			b := int(s.cands.top().id) * h.stride0
			prefetchInt32(h.links0[b : b+h.stride0])
		}
		out, _ := h.links(c.id, level)
		batch := s.batch[:0]
		for _, e := range out {
			if mk := &s.marks[e]; mk.visit != s.visitEpoch {
				mk.visit = s.visitEpoch
				batch = append(batch, e)
			}
		}
		s.batch = batch
		s.sink += s.sp.touch(batch)
		for _, e := range batch {
			n := cand{d: s.distance(q, e), id: e}
			switch {
			case s.res.len() < ef:
				s.res.push(n)
			case closer(n, s.res.top()):
				s.res.replaceTop(n) // the farthest goes
			default:
				continue
			}
			s.cands.push(n)
		}
	}
	// Popping the farthest first fills the result from its end: the
	// heap's own order, with no comparison function to call.
	n := s.res.len()
	s.layer = slices.Grow(s.layer[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		s.layer[i] = s.res.pop()
	}
	return s.layer
}

// search descends from the entry point to layer 0 and returns the ef
// nearest points found there, nearest first.
//
// The paper descends the upper layers greedily (ef = 1). Here they are
// searched with ef = M: in clustered data whose clusters are islands on
// layer 0, once the window has slid a greedy descent now and then ends in
// the wrong cluster, and the point then inserted there links to the wrong
// cluster too. The wider descent keeps the kNN lists' recall for a few
// more distances (anngraph/README.md, Design, has the figures).
func (s *searcher) search(q *point, ef int) []cand {
	h := s.g
	if h.entry < 0 {
		return s.layer[:0]
	}
	s.entries = append(s.entries[:0], cand{d: s.distance(q, h.entry), id: h.entry})
	for l := h.top; l > 0; l-- {
		s.entries = append(s.entries[:0], s.searchLayer(q, s.entries, h.m, l)...)
	}
	return s.searchLayer(q, s.entries, ef, 0)
}

// placement is where an insert's searches put a point, before it is
// linked (hnsw.commit): its links per layer and every distance computed to
// it on the way.
type placement struct {
	x     int32
	level int
	links [][]cand // links[l]: the neighbours chosen on layer l
	found []cand   // every distance computed to x by the searches
	// reverse holds the distances to the points that list x's nearest
	// and are not in found (Window.findReverse).
	reverse []cand
}

// reset empties p for the point x of the given level, keeping its room.
func (p *placement) reset(x int32, level int) {
	p.x, p.level = x, level
	for len(p.links) <= level {
		p.links = append(p.links, nil)
	}
	p.links = p.links[:level+1]
	for l := range p.links {
		p.links[l] = p.links[l][:0]
	}
	p.found, p.reverse = p.found[:0], p.reverse[:0]
}

// place is the search half of the paper's INSERT (algorithm 1) for the
// point in slot x, already in the space: the neighbours x gets on each
// layer, chosen by the selection heuristic (algorithm 4), written to pl
// with the distances computed. It only reads the graph.
//
// mates are points of the same batch placed before x and not linked yet,
// which no search can find: their distances are computed outright, and on
// each layer they reach they stand among the candidates.
func (s *searcher) place(x int32, level, ef int, mates []admitted, pl *placement) {
	h := s.g
	pl.reset(x, level)
	s.beginQuery()
	q := s.sp.pointFor(x, &s.query)
	top := h.top
	if h.entry >= 0 {
		s.entries = append(s.entries[:0], cand{d: s.distance(&q, h.entry), id: h.entry})
		for l := top; l > level; l-- {
			s.entries = append(s.entries[:0], s.searchLayer(&q, s.entries, h.m, l)...)
		}
	}
	for _, y := range mates {
		s.distance(&q, y.slot)
	}
	for l := level; l >= 0; l-- {
		var found []cand
		if h.entry >= 0 && l <= top {
			found = s.searchLayer(&q, s.entries, ef, l)
			s.entries = append(s.entries[:0], found...)
			found = s.entries
		}
		found = s.withMates(found, mates, l)
		s.sel = s.selectNeighbors(found[:h.selectPool(len(found))], h.m, s.sel[:0])
		pl.links[l] = append(pl.links[l], s.sel...)
	}
	pl.found = append(pl.found, s.log...)
}

// withMates returns the candidates found on layer l with the mates that
// reach the layer among them, nearest first. It reuses s.layer.
func (s *searcher) withMates(found []cand, mates []admitted, l int) []cand {
	out := found
	for _, y := range mates {
		if y.level >= l {
			if len(out) == len(found) {
				out = append(s.layer[:0], found...)
			}
			out = append(out, cand{d: s.marks[y.slot].d, id: y.slot})
		}
	}
	if len(out) > len(found) {
		slices.SortFunc(out, cmpCand)
		s.layer = out
	}
	return out
}

// selectNeighbors is the paper's SELECT-NEIGHBORS-HEURISTIC (algorithm 4)
// without extension: from cands, nearest first, it keeps a candidate only if
// it is nearer the base point than every candidate already kept, up to m.
//
// Most rejected candidates fail against the first one kept, so that one is
// scattered once and compared with every candidate; a candidate that passes
// it and meets several more kept ones is scattered itself.
func (s *searcher) selectNeighbors(cands []cand, m int, sel []cand) []cand {
	var first point
	for _, c := range cands {
		if len(sel) >= m {
			break
		}
		good := true
		if len(sel) > 0 {
			s.distEvals++
			good = s.sp.distTo(&first, c.id) >= c.d
		}
		if good && len(sel) > 1 {
			pc := s.sp.point(c.id)
			if len(sel) > 3 {
				s.sp.prepare(&pc, &s.cand)
			}
			for _, k := range sel[1:] {
				s.distEvals++
				if s.sp.distTo(&pc, k.id) < c.d {
					good = false
					break
				}
			}
		}
		if good {
			sel = append(sel, c)
			if len(sel) == 1 {
				first = s.sp.pointFor(c.id, &s.base)
			}
		}
	}
	return sel
}
