package anngraph

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"streamer/internal/heap"
	"streamer/vector"
)

// Window is a sliding window of points with an approximate kNN list per
// point, kept up to date as points enter and leave. Its methods are safe
// for concurrent use: Insert holds a lock for its own duration only, and a
// reader works on a View from Snapshot, which never changes.
type Window struct {
	mu  sync.Mutex
	cfg Config

	sp    space
	graph *hnsw // nil when Exhaustive
	lists knnLists

	keys  []uint64 // by slot
	times []time.Time
	gen   []uint32 // bumped when a slot is freed, to spot stale age entries
	// The live slots in insertion order, oldest first, as a doubly linked
	// list (-1 ends it).
	prev, next []int32
	head, tail int32
	free       []int32 // freed slots, reused last in first out
	live       int
	slotOf     map[uint64]int32

	newest  time.Time // the latest event time inserted
	started bool
	ages    heap.Heap[ageEntry] // live slots by event time, oldest on top, when MaxAge > 0

	short   []int32 // lists to repair after an eviction
	evicted []int32 // neighbours of the evicted point, repair candidates
	row     []int32 // slot to row, for Snapshot
	brute   []cand
	near    farHeap // the nearest of an insert's distances
	main    *searcher
	pl      placement // the placement of the point Insert adds

	// InsertBatch's chunk: its admitted points and their placements.
	admitted   []admitted
	placements []placement

	stats Stats
}

// Stats counts the work of a Window since New. Read it with Window.Stats.
type Stats struct {
	Inserts    uint64        // points inserted
	Evictions  uint64        // points evicted, by count or by age
	Rejected   uint64        // points too old on arrival, evicted at once
	InsertTime time.Duration // time spent inserting, evictions excluded
	EvictTime  time.Duration // time spent evicting, repairs included
	// Distances counts the distance evaluations, ListRepairs the searches
	// made for kNN lists that fell below K entries.
	Distances   uint64
	ListRepairs uint64
}

// New returns an empty window.
func New(cfg Config) (*Window, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &Window{
		cfg:    cfg,
		sp:     space{metric: cfg.Metric, f32: !cfg.Exhaustive, maxRows: cfg.MaxExamples},
		lists:  knnLists{k: cfg.K, depth: cfg.ListDepth},
		head:   -1,
		tail:   -1,
		slotOf: make(map[uint64]int32),
		ages:   heap.New[ageEntry](nil, ageEntry.before),
	}
	w.main = newSearcher(&w.sp, nil)
	if !cfg.Exhaustive {
		w.graph = newHNSW(&w.sp, cfg.M, cfg.Seed)
		w.main = w.graph.main
	}
	return w, nil
}

// Config returns the window's configuration with its defaults filled in.
func (w *Window) Config() Config { return w.cfg }

// Len returns the number of points in the window.
func (w *Window) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live
}

// Contains reports whether the point of key is in the window.
func (w *Window) Contains(key uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.slotOf[key]
	return ok
}

// Stats returns the window's counters.
func (w *Window) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	if w.graph != nil {
		s.Distances += w.graph.distEvals()
	}
	return s
}

// Insert adds the point v with a caller-chosen unique key and event time ts.
// It first evicts what the new point pushes out: by age, the points older
// than ts's window (when MaxAge is set), then by count the oldest inserted.
// It returns the evicted keys, oldest first. A point that is itself older
// than the age window on arrival is not kept: its own key is returned as
// evicted.
//
// The window keeps v: the caller must not change it afterwards. All
// vectors of a window are of one kind, dense (of one length) or sparse.
func (w *Window) Insert(key uint64, ts time.Time, v vector.Vector) (evicted []uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.sp.check(v); err != nil {
		return nil, fmt.Errorf("anngraph: insert key %d: %w", key, err)
	}
	if _, dup := w.slotOf[key]; dup {
		return nil, fmt.Errorf("anngraph: insert key %d: key already in the window", key)
	}
	start := time.Now()
	evicted, ok := w.makeRoom(key, ts, nil)
	if !ok {
		return evicted, nil
	}
	mid := time.Now()
	w.add(key, ts, v)
	end := time.Now()
	w.stats.EvictTime += mid.Sub(start)
	w.stats.InsertTime += end.Sub(mid)
	return evicted, nil
}

// EvictOldest evicts the oldest points, in insertion order, while
// evict(key) holds, and returns their keys, oldest first: a window that
// forgets what came before a change. Each eviction repairs the kNN lists
// it shortens, as a slide does.
func (w *Window) EvictOldest(evict func(key uint64) bool) []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	start := time.Now()
	var keys []uint64
	for w.head >= 0 && evict(w.keys[w.head]) {
		keys = append(keys, w.keys[w.head])
		w.evict(w.head)
	}
	w.stats.EvictTime += time.Since(start)
	return keys
}

// makeRoom evicts what a point of time ts pushes out, as Insert says,
// appending the keys to evicted. It reports false, with key appended, when
// the point is itself too old to enter.
func (w *Window) makeRoom(key uint64, ts time.Time, evicted []uint64) ([]uint64, bool) {
	if w.cfg.MaxAge > 0 {
		if w.started && ts.Before(w.newest.Add(-w.cfg.MaxAge)) {
			w.stats.Rejected++
			return append(evicted, key), false
		}
		if !w.started || ts.After(w.newest) {
			w.newest, w.started = ts, true
		}
		evicted = w.evictOlderThan(w.newest.Add(-w.cfg.MaxAge), evicted)
	}
	for w.live >= w.cfg.MaxExamples {
		evicted = append(evicted, w.keys[w.head])
		w.evict(w.head)
	}
	return evicted, true
}

func (w *Window) evictOlderThan(cutoff time.Time, evicted []uint64) []uint64 {
	for w.ages.Len() > 0 {
		e := w.ages.Top()
		if w.gen[e.slot] != e.gen {
			w.ages.Pop() // the slot was evicted by count
			continue
		}
		if !w.times[e.slot].Before(cutoff) {
			break
		}
		w.ages.Pop()
		evicted = append(evicted, w.keys[e.slot])
		w.evict(e.slot)
	}
	return evicted
}

// add stores the point in a slot and links it into the graph and the lists.
func (w *Window) add(key uint64, ts time.Time, v vector.Vector) {
	x := w.admit(key, ts, v)
	if w.graph == nil {
		w.takeList(x, w.neighboursOf(x))
		return
	}
	level := w.graph.drawLevel(x)
	w.place(w.main, x, level, nil, &w.pl)
	w.link(&w.pl)
}

// admit stores the point in a slot, in the window's order and its space,
// and returns the slot; add or InsertBatch then links it.
func (w *Window) admit(key uint64, ts time.Time, v vector.Vector) int32 {
	x := w.allocSlot()
	w.keys[x], w.times[x] = key, ts
	w.slotOf[key] = x
	w.pushBack(x)
	w.live++
	w.stats.Inserts++
	if w.cfg.MaxAge > 0 {
		w.ages.Push(ageEntry{ts: ts, slot: x, gen: w.gen[x]})
		if w.ages.Len() > 2*w.live+64 {
			w.compactAges()
		}
	}
	w.sp.set(x, w.sp.newPoint(v))
	w.lists.grow(x)
	if w.lists.nb[x] == nil {
		w.lists.nb[x] = make([]cand, 0, w.lists.depth)
	}
	return x
}

// place finds, with s, where the admitted point x goes in the graph and
// which points it is offered to: it reads the graph and the lists, and
// changes neither. mates are the points of x's batch placed before it.
func (w *Window) place(s *searcher, x int32, level int, mates []admitted, pl *placement) {
	s.place(x, level, w.cfg.EfConstruction, mates, pl)
	w.findReverse(s, pl)
}

// link links a placed point into the graph and the lists: its graph
// links, its list and its offers to the others' lists.
func (w *Window) link(pl *placement) {
	w.graph.commit(pl)
	w.takeList(pl.x, pl.found)
	for _, c := range pl.reverse {
		w.lists.offer(pl.x, c.id, c.d)
		w.lists.offer(c.id, pl.x, c.d)
	}
}

// findReverse computes the distances from the placed point to the points
// that list its K nearest, for link to offer it to them. kNN is not
// symmetric: a point p far from the crowd may have x among its K nearest
// while x has p far down its own ranking, beyond the reach of x's search.
// Such a p lists points near x, so it is found among their reverse lists,
// as in NN-descent's local join (Dong et al., 2011).
//
// The K nearest are those of x's list once link has made it: nothing in
// the lists refers to x before that.
func (w *Window) findReverse(s *searcher, pl *placement) {
	nearest(&s.near, pl.found, w.cfg.K)
	q := w.sp.pointFor(pl.x, &s.query)
	for c := range s.near.all() {
		for _, p := range w.lists.rev[c.id] {
			if p != pl.x && !s.known(p) {
				pl.reverse = append(pl.reverse, cand{d: s.distance(&q, p), id: p})
			}
		}
	}
}

// neighboursOf returns the distances from x to every live point, in an
// exhaustive window.
func (w *Window) neighboursOf(x int32) []cand {
	w.brute = w.brute[:0]
	p := w.sp.pointFor(x, &w.main.query)
	for s := w.head; s >= 0; s = w.next[s] {
		if s != x {
			w.brute = append(w.brute, cand{d: w.sp.distTo(&p, s), id: s})
			w.stats.Distances++
		}
	}
	return w.brute
}

// takeList makes x's list the nearest of found, and offers x to the list
// of every point in found: a distance computed once serves both ends.
//
// x's list, empty until now, gets the nearest of found in one go: offered
// one by one in the order found, most would enter it only to be pushed out.
func (w *Window) takeList(x int32, found []cand) {
	for _, c := range found {
		w.lists.offer(c.id, x, c.d)
	}
	nearest(&w.near, found, w.lists.depth)
	for c := range w.near.all() {
		w.lists.offer(x, c.id, c.d)
	}
}

func (w *Window) allocSlot() int32 {
	if n := len(w.free); n > 0 {
		x := w.free[n-1]
		w.free = w.free[:n-1]
		return x
	}
	x := int32(len(w.keys))
	w.keys = append(w.keys, 0)
	w.times = append(w.times, time.Time{})
	w.gen = append(w.gen, 0)
	w.prev = append(w.prev, -1)
	w.next = append(w.next, -1)
	return x
}

func (w *Window) pushBack(x int32) {
	w.prev[x], w.next[x] = w.tail, -1
	if w.tail >= 0 {
		w.next[w.tail] = x
	} else {
		w.head = x
	}
	w.tail = x
}

func (w *Window) unlink(x int32) {
	p, n := w.prev[x], w.next[x]
	if p >= 0 {
		w.next[p] = n
	} else {
		w.head = n
	}
	if n >= 0 {
		w.prev[n] = p
	} else {
		w.tail = p
	}
	w.prev[x], w.next[x] = -1, -1
}

// evict removes the point in slot x: from every kNN list and every graph
// link, then repairs the lists that fell below K entries.
func (w *Window) evict(x int32) {
	w.evicted = w.evicted[:0]
	for _, c := range w.lists.nb[x] {
		w.evicted = append(w.evicted, c.id)
	}
	w.short = w.lists.remove(x, w.short[:0])
	if w.graph != nil {
		w.graph.remove(x)
	}
	w.unlink(x)
	delete(w.slotOf, w.keys[x])
	w.sp.clear(x)
	w.gen[x]++
	w.live--
	w.stats.Evictions++
	w.free = append(w.free, x)
	for _, p := range w.short {
		w.repairList(p)
	}
}

// repairList refills p's list, which fell below K entries, by a search of
// the graph started from p and the evicted point's neighbours; should that
// leave it short (a graph too sparse to reach K points), by a search from the
// entry point, then by brute force. Every distance computed is also offered
// to the other end's list.
//
// It runs even if offers from other repairs have filled p's list since
// the eviction: those are not necessarily p's nearest.
func (w *Window) repairList(p int32) {
	w.stats.ListRepairs++
	q := w.sp.pointFor(p, &w.main.query)
	if w.graph != nil {
		g := w.main
		g.beginQuery()
		g.memoize(p, 0) // never offer p to itself
		g.entries = g.entries[:0]
		for _, s := range w.evicted {
			if s != p {
				g.entries = append(g.entries, cand{d: g.distance(&q, s), id: s})
			}
		}
		g.entries = append(g.entries, cand{d: 0, id: p})
		g.searchLayer(&q, g.entries, w.cfg.EfSearch, 0)
		w.offerBoth(p, g.log)
		if w.listFull(p) {
			return
		}
		g.search(&q, w.cfg.EfSearch)
		w.offerBoth(p, g.log)
		if w.listFull(p) {
			return
		}
	}
	for s := w.head; s >= 0; s = w.next[s] {
		if s != p && w.linked(s) {
			d := w.sp.distTo(&q, s)
			w.stats.Distances++
			w.lists.offerNew(p, s, d)
			w.lists.offerNew(s, p, d)
		}
	}
}

// linked reports whether the live slot s is linked into the graph: not a
// point of the chunk InsertBatch is inserting, which joins the graph at
// its commit and no list may take before.
func (w *Window) linked(s int32) bool {
	return w.graph == nil || w.graph.nodes[s].level >= 0
}

// listFull reports whether p lists K points, or all the others.
func (w *Window) listFull(p int32) bool {
	return len(w.lists.nb[p]) >= min(w.lists.k, w.live-1)
}

func (w *Window) offerBoth(p int32, found []cand) {
	for _, c := range found {
		w.lists.offerNew(p, c.id, c.d)
		w.lists.offerNew(c.id, p, c.d)
	}
}

// Snapshot returns a consistent view of the window: its points in
// insertion order, oldest first, with their kNN lists. It copies O(n·K)
// under the window's lock and shares the vectors, which never change.
func (w *Window) Snapshot() *View {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.live
	v := &View{
		metric: w.cfg.Metric,
		k:      w.cfg.K,
		keys:   make([]uint64, 0, n),
		times:  make([]time.Time, 0, n),
		vecs:   make([]vector.Vector, 0, n),
		sq:     make([]float64, 0, n),
		start:  make([]int32, 1, n+1),
	}
	w.row = slices.Grow(w.row[:0], len(w.keys))[:len(w.keys)]
	r := int32(0)
	for s := w.head; s >= 0; s = w.next[s] {
		w.row[s] = r
		r++
		v.keys = append(v.keys, w.keys[s])
		v.times = append(v.times, w.times[s])
		v.vecs = append(v.vecs, w.sp.pts[s].v)
		v.sq = append(v.sq, w.sp.pts[s].sq)
	}
	total := 0
	for s := w.head; s >= 0; s = w.next[s] {
		total += min(len(w.lists.nb[s]), w.cfg.K)
	}
	v.nbrs = make([]Neighbor, 0, total)
	for s := w.head; s >= 0; s = w.next[s] {
		l := w.lists.nb[s]
		for _, c := range l[:min(len(l), w.cfg.K)] {
			v.nbrs = append(v.nbrs, Neighbor{Row: int(w.row[c.id]), Distance: w.sp.report(c.d)})
		}
		v.start = append(v.start, int32(len(v.nbrs)))
	}
	v.layers, v.efSearch, v.searches = w.copyLayers(n), w.cfg.EfSearch, newSearches()
	if w.sp.stride > 0 {
		v.stride = w.sp.stride
		v.f32 = make([]float32, 0, n*v.stride)
		for s := w.head; s >= 0; s = w.next[s] {
			v.f32 = append(v.f32, w.sp.row(s)...)
		}
	}
	return v
}

// Match is a point found by Window.Search.
type Match struct {
	Key      uint64
	Distance float64 // in the Metric's units
}

// Search returns the k points of the window nearest v, nearest first, found
// with EfSearch (exactly, when Exhaustive). It takes the window's lock.
func (w *Window) Search(v vector.Vector, k int) ([]Match, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.sp.check(v); err != nil {
		return nil, fmt.Errorf("anngraph: search: %w", err)
	}
	q := w.sp.newPoint(v)
	w.sp.prepare(&q, &w.main.query)
	var found []cand
	if w.graph == nil {
		w.brute = w.brute[:0]
		for s := w.head; s >= 0; s = w.next[s] {
			w.brute = append(w.brute, cand{d: w.sp.distTo(&q, s), id: s})
		}
		slices.SortFunc(w.brute, cmpCand)
		found = w.brute
	} else {
		w.main.beginQuery()
		found = w.main.search(&q, max(w.cfg.EfSearch, k))
	}
	out := make([]Match, min(k, len(found)))
	for i := range out {
		out[i] = Match{Key: w.keys[found[i].id], Distance: w.sp.report(found[i].d)}
	}
	return out, nil
}

// ageEntry is a slot and its event time in the age heap; it is stale when
// the slot's generation moved on.
type ageEntry struct {
	ts   time.Time
	slot int32
	gen  uint32
}

// before orders age entries oldest first, ties by slot.
func (a ageEntry) before(b ageEntry) bool {
	return a.ts.Before(b.ts) || a.ts.Equal(b.ts) && a.slot < b.slot
}

// compactAges drops the stale entries, which pile up when points leave by
// count in another order than by time.
func (w *Window) compactAges() {
	live := slices.DeleteFunc(w.ages.Items(), func(e ageEntry) bool { return w.gen[e.slot] != e.gen })
	w.ages = heap.New(live, ageEntry.before)
}

// Build builds the kNN graph of a static set of rows: the view of a window
// that holds them all, row i with key i and the zero time, inserted in
// order by InsertBatch (on cfg.InsertWorkers cores; the result does not
// depend on them). cfg.MaxExamples and cfg.MaxAge are ignored.
func Build(rows []vector.Vector, cfg Config) (*View, error) {
	cfg.MaxExamples = max(len(rows), 1)
	cfg.MaxAge = 0
	w, err := New(cfg)
	if err != nil {
		return nil, err
	}
	items := make([]Item, len(rows))
	for i, r := range rows {
		items[i] = Item{Key: uint64(i), Vec: r}
	}
	if _, err := w.InsertBatch(items); err != nil {
		return nil, err
	}
	return w.Snapshot(), nil
}
