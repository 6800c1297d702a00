package anngraph

import (
	"math"
	"math/rand/v2"
	"slices"
)

// hnsw is a hierarchical navigable small world graph (Malkov and Yashunin,
// "Efficient and robust approximate nearest neighbor search using
// Hierarchical Navigable Small World graphs", 2016/2018) with real
// deletion. Every link has its reverse recorded, so that deleting a point
// removes every link to it; the points that lose a link get a replacement
// from the deleted point's own links (see remove).
type hnsw struct {
	sp        *space
	m, m0     int     // links kept per point on the upper layers, on layer 0
	levelMult float64 // 1/ln(M), the paper's m_L
	rng       *rand.Rand

	nodes []node
	// Layer 0 links, flat for locality: point x's links are
	// links0[x*stride0+1 : x*stride0+1+links0[x*stride0]], their distances
	// dist0[x*(m0+1):], with room for one more link than the capacity.
	links0     []int32
	dist0      []float32
	stride0    int
	entry      int32 // -1 when empty
	top        int   // level of entry
	levelCount []int // live points per level
	born       uint64

	// main is the scratch of the searches made under the window's lock;
	// a batch's parallel searches each have their own (InsertBatch).
	main     *searcher
	workers  []*searcher
	pruneBuf []cand
	kept     []cand
}

type node struct {
	level  int32       // -1 when the slot is free
	born   uint64      // insertion order
	up     [][]int32   // up[l-1]: links on layer l ≥ 1
	upDist [][]float32 // upDist[l-1][i]: distance to up[l-1][i], for pruning
	in     [][]int32   // in[l]: the points linking here on layer l
}

func newHNSW(sp *space, m int, seed uint64) *hnsw {
	h := &hnsw{
		sp:        sp,
		m:         m,
		m0:        2 * m,
		stride0:   2*m + 2,
		levelMult: 1 / math.Log(float64(m)),
		rng:       rand.New(rand.NewPCG(seed, 0x510e527fade682d1)),
		entry:     -1,
	}
	h.main = newSearcher(sp, h)
	return h
}

const maxLevel = 30

// selectPoolM·M is the number of nearest candidates of an insert's search
// that the neighbour-selection heuristic considers, where the paper takes
// all EfConstruction of them. On clustered dense points most candidates
// fail the heuristic, and going through all of them cost a large share of
// an insert's distances; the nearest 4M choose links about as good for the
// kNN lists for far fewer distances per insert, more than the heuristic's
// own share, since the later searches through the graph it builds are
// cheaper too; 3M and 2M lost recall. Dense only: on sparse text rows the
// pool saved less and cost more recall. anngraph/README.md (Design, and
// Measured: the selection pool) has the figures; BenchmarkFill reports the
// distances per insert, `streamer bench ann` the recall.
const selectPoolM = 4

// selectPool returns how many of n candidates, nearest first, the
// heuristic considers.
func (h *hnsw) selectPool(n int) int {
	if h.sp.kind == kindDense {
		return min(n, selectPoolM*h.m)
	}
	return n
}

func (h *hnsw) randomLevel() int {
	l := int(-math.Log(1-h.rng.Float64()) * h.levelMult)
	return min(l, maxLevel)
}

func (h *hnsw) capacity(level int) int {
	if level == 0 {
		return h.m0
	}
	return h.m
}

func (h *hnsw) grow(slot int32) {
	for int(slot) >= len(h.nodes) {
		h.nodes = append(h.nodes, node{level: -1})
		h.links0 = append(h.links0, make([]int32, h.stride0)...)
		h.dist0 = append(h.dist0, make([]float32, h.m0+1)...)
	}
	h.main.fit()
}

// links returns x's links on layer l and their distances. The slices alias
// the graph's storage and have room for capacity(l)+1 links; after changing
// them, record their new length with setLinks.
func (h *hnsw) links(x int32, l int) ([]int32, []float32) {
	if l > 0 {
		nd := &h.nodes[x]
		return nd.up[l-1], nd.upDist[l-1]
	}
	b := int(x) * h.stride0
	n := int(h.links0[b])
	d := int(x) * (h.m0 + 1)
	return h.links0[b+1 : b+1+n : b+h.stride0], h.dist0[d : d+n : d+h.m0+1]
}

func (h *hnsw) setLinks(x int32, l int, ids []int32, ds []float32) {
	if l > 0 {
		nd := &h.nodes[x]
		nd.up[l-1], nd.upDist[l-1] = ids, ds
		return
	}
	h.links0[int(x)*h.stride0] = int32(len(ids))
}

func cmpCand(a, b cand) int {
	switch {
	case closer(a, b):
		return -1
	case closer(b, a):
		return 1
	}
	return 0
}

// drawLevel makes room for slot x and draws the level of the point that
// enters it. The point joins the graph at commit: until then no search
// reaches it, and it counts for no level.
func (h *hnsw) drawLevel(x int32) int {
	h.grow(x)
	return h.randomLevel()
}

// commit links a placed point to the neighbours its placement chose, both
// ways, and makes it the entry point when it is the graph's first or
// reaches above the top.
func (h *hnsw) commit(pl *placement) {
	x := pl.x
	h.initNode(x, pl.level)
	h.born++
	h.nodes[x].born = h.born
	for l, sel := range pl.links {
		for _, c := range sel {
			h.link(x, c.id, c.d, l)
			h.link(c.id, x, c.d, l)
		}
	}
	if h.entry < 0 || pl.level > h.top {
		h.entry, h.top = x, pl.level
	}
}

// searchers returns n ≥ 1 searchers, the main one first, each with room
// for the graph's slots.
func (h *hnsw) searchers(n int) []*searcher {
	for len(h.workers) < n-1 {
		h.workers = append(h.workers, newSearcher(h.sp, h))
	}
	all := append([]*searcher{h.main}, h.workers[:max(n-1, 0)]...)
	for _, s := range all {
		s.fit()
	}
	return all
}

// distEvals counts the distances computed by the graph's searchers.
func (h *hnsw) distEvals() uint64 {
	n := h.main.distEvals
	for _, s := range h.workers {
		n += s.distEvals
	}
	return n
}

func (h *hnsw) initNode(x int32, level int) {
	nd := &h.nodes[x]
	nd.level = int32(level)
	for len(nd.in) <= level {
		nd.in = append(nd.in, nil)
	}
	for len(nd.up) < level {
		nd.up = append(nd.up, make([]int32, 0, h.m+1))
		nd.upDist = append(nd.upDist, make([]float32, 0, h.m+1))
	}
	nd.in, nd.up, nd.upDist = nd.in[:level+1], nd.up[:level], nd.upDist[:level]
	for l := range level + 1 {
		nd.in[l] = nd.in[l][:0]
		if l > 0 {
			nd.up[l-1], nd.upDist[l-1] = nd.up[l-1][:0], nd.upDist[l-1][:0]
		}
	}
	h.links0[int(x)*h.stride0] = 0
	for len(h.levelCount) <= level {
		h.levelCount = append(h.levelCount, 0)
	}
	for l := range level + 1 {
		h.levelCount[l]++
	}
}

// link adds the link a → b at distance d on layer l, pruning a's links when
// they exceed the layer's capacity.
func (h *hnsw) link(a, b int32, d float64, l int) {
	out, ds := h.links(a, l)
	out, ds = append(out, b), append(ds, float32(d))
	h.setLinks(a, l, out, ds)
	h.nodes[b].in[l] = append(h.nodes[b].in[l], a)
	if len(out) > h.capacity(l) {
		h.prune(a, l)
	}
}

// prune shrinks a's links on layer l with the selection heuristic. A link
// that is the only way to its point is kept while there is room.
func (h *hnsw) prune(a int32, l int) {
	out, ds := h.links(a, l)
	cs := h.pruneBuf[:0]
	for i, b := range out {
		cs = append(cs, cand{d: float64(ds[i]), id: b})
	}
	slices.SortFunc(cs, cmpCand)
	kept := h.main.selectNeighbors(cs, h.capacity(l), h.kept[:0])
	for _, c := range cs {
		if len(kept) >= h.capacity(l) {
			break
		}
		if len(h.nodes[c.id].in[l]) == 1 && !slices.ContainsFunc(kept, func(k cand) bool { return k.id == c.id }) {
			kept = append(kept, c)
		}
	}
	h.pruneBuf, h.kept = cs, kept
	out, ds = out[:0], ds[:0]
	for _, c := range kept {
		out, ds = append(out, c.id), append(ds, float32(c.d))
	}
	h.setLinks(a, l, out, ds)
	for _, c := range cs {
		if !slices.ContainsFunc(kept, func(k cand) bool { return k.id == c.id }) {
			dropIn(&h.nodes[c.id].in[l], a)
		}
	}
}

func dropIn(in *[]int32, a int32) {
	*in = dropID(*in, a, "reverse link")
}

// dropOut removes the link a → b on layer l.
func (h *hnsw) dropOut(a int32, l int, b int32) {
	out, ds := h.links(a, l)
	for i, x := range out {
		if x == b {
			last := len(out) - 1
			out[i], ds[i] = out[last], ds[last]
			h.setLinks(a, l, out[:last], ds[:last])
			return
		}
	}
	panic("anngraph: link out of step")
}

// remove deletes x from the graph. Every link to x goes. Each point that
// linked to x gets instead a link to the nearest of x's own links on that
// layer that it lacks, as FreshDiskANN's delete consolidation does with a
// full prune (Singh et al., 2021), here cut to one link to stay cheap. A
// point of x's links that is left with no link to it is linked from its
// nearest neighbour, so that no point becomes unreachable.
func (h *hnsw) remove(x int32) {
	nx := &h.nodes[x]
	level := int(nx.level)
	for l := level; l >= 0; l-- {
		out, ds := h.links(x, l)
		for _, b := range out {
			dropIn(&h.nodes[b].in[l], x)
		}
		for _, a := range nx.in[l] {
			h.dropOut(a, l, x)
		}
		for _, a := range nx.in[l] {
			h.replaceLink(a, x, l)
		}
		for _, b := range out {
			if len(h.nodes[b].in[l]) == 0 {
				h.adopt(b, l)
			}
		}
		h.levelCount[l]--
		h.setLinks(x, l, out[:0], ds[:0])
		nx.in[l] = nx.in[l][:0]
	}
	nx.level = -1
	if x == h.entry {
		h.newEntry()
	}
}

// replaceLink gives a a link to the nearest point of x's links on layer l
// that a does not link to yet.
func (h *hnsw) replaceLink(a, x int32, l int) {
	best := cand{d: math.Inf(1), id: -1}
	pa := h.sp.pointFor(a, &h.main.base)
	have, _ := h.links(a, l)
	xs, _ := h.links(x, l)
	for _, b := range xs {
		if b == a || slices.Contains(have, b) {
			continue
		}
		h.main.distEvals++
		if c := (cand{d: h.sp.distTo(&pa, b), id: b}); closer(c, best) {
			best = c
		}
	}
	if best.id >= 0 {
		h.link(a, best.id, best.d, l)
	}
}

// adopt links b, which no point links to on layer l, from its nearest
// neighbour there.
func (h *hnsw) adopt(b int32, l int) {
	out, ds := h.links(b, l)
	best := -1
	for i := range out {
		if best < 0 || ds[i] < ds[best] {
			best = i
		}
	}
	if best >= 0 {
		h.link(out[best], b, float64(ds[best]), l)
	}
}

// newEntry picks an entry point after the entry left.
func (h *hnsw) newEntry() {
	for h.top >= 0 && h.levelCount[h.top] == 0 {
		h.top--
	}
	if h.top < 0 {
		h.entry = -1
		h.top = 0
		return
	}
	// Take the youngest point of the top level, which will stay longest in
	// a window that evicts the oldest first. The scan happens about once
	// per entry point's lifetime, a fraction of a window length.
	h.entry = -1
	for s := range h.nodes {
		if int(h.nodes[s].level) == h.top && (h.entry < 0 || h.nodes[s].born > h.nodes[h.entry].born) {
			h.entry = int32(s)
		}
	}
}
