package anngraph

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"streamer/vector"
)

// Item is a point for InsertBatch: its caller-chosen unique key, its event
// time and its vector, as Insert takes them.
type Item struct {
	Key  uint64
	Time time.Time
	Vec  vector.Vector
}

// batchChunk bounds the points placed at once. A point of a chunk finds
// the points before it in the chunk by computing its distance to each,
// (chunk−1)/2 distances per insert on average, few beside the search's
// (BenchmarkFill reports those per insert); a chunk's placing ends when
// its slowest insert does, which longer chunks amortize.
const batchChunk = 32

// InsertBatch inserts the items in order as Insert would one after
// another, with one difference that lets Config.InsertWorkers goroutines
// share the work. The items are taken in chunks; the searches that place a
// chunk's points in the graph, most of an insert's work, run at once
// against the graph as it stood before the chunk, and each point finds the
// chunk's earlier points, which no search can reach yet, by computing its
// distances to them. Then the points are linked, one after another. The
// result depends on the items and on how they are split between calls,
// never on the number of workers.
//
// It returns the evicted keys, oldest first, with the keys of the items
// too old to enter (as Insert). An item that Insert would refuse (a bad
// vector, a key already in the window or twice in the batch) refuses the
// whole batch: nothing is inserted.
func (w *Window) InsertBatch(items []Item) (evicted []uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkBatch(items); err != nil {
		return nil, err
	}
	for len(items) > 0 {
		n := min(len(items), batchChunk, w.cfg.MaxExamples)
		evicted = w.insertChunk(items[:n], evicted)
		items = items[n:]
	}
	return evicted, nil
}

// checkBatch returns the first error Insert would return for one of the
// items, were the items before it inserted.
func (w *Window) checkBatch(items []Item) error {
	probe := space{kind: w.sp.kind, dim: w.sp.dim}
	keys := make(map[uint64]bool, len(items))
	for _, it := range items {
		if err := probe.check(it.Vec); err != nil {
			return fmt.Errorf("anngraph: insert key %d: %w", it.Key, err)
		}
		if _, dup := w.slotOf[it.Key]; dup || keys[it.Key] {
			return fmt.Errorf("anngraph: insert key %d: key already in the window", it.Key)
		}
		keys[it.Key] = true
		if probe.kind == kindUnknown {
			probe.kind, probe.dim = kindSparse, 0
			if it.Vec.IsDense() {
				probe.kind, probe.dim = kindDense, len(it.Vec.Values)
			}
		}
	}
	return nil
}

// admitted is a chunk's point in the window's order and space, not yet
// placed in the graph.
type admitted struct {
	slot  int32
	gen   uint32
	level int
}

// insertChunk inserts at most MaxExamples items: it makes room for them
// and admits them one by one, places them all at once, then links them in
// order.
func (w *Window) insertChunk(items []Item, evicted []uint64) []uint64 {
	if w.graph == nil {
		for _, it := range items {
			evicted = w.insertOne(it, evicted)
		}
		return evicted
	}
	start := time.Now()
	adm := w.admitted[:0]
	for _, it := range items {
		var ok bool
		if evicted, ok = w.makeRoom(it.Key, it.Time, evicted); !ok {
			continue
		}
		x := w.admit(it.Key, it.Time, it.Vec)
		adm = append(adm, admitted{slot: x, gen: w.gen[x], level: w.graph.drawLevel(x)})
	}
	// An item can push an earlier one out by age; its slot may even
	// serve a later item since.
	kept := adm[:0]
	for _, a := range adm {
		if w.gen[a.slot] == a.gen {
			kept = append(kept, a)
		}
	}
	w.admitted = kept
	mid := time.Now()
	if len(kept) == 0 {
		w.stats.EvictTime += mid.Sub(start)
		return evicted
	}
	pls := w.placeAll(kept)
	for i := range pls {
		w.link(&pls[i])
	}
	w.stats.EvictTime += mid.Sub(start)
	w.stats.InsertTime += time.Since(mid)
	return evicted
}

// insertOne is Insert without the checks and the lock.
func (w *Window) insertOne(it Item, evicted []uint64) []uint64 {
	start := time.Now()
	evicted, ok := w.makeRoom(it.Key, it.Time, evicted)
	if !ok {
		return evicted
	}
	mid := time.Now()
	w.add(it.Key, it.Time, it.Vec)
	w.stats.EvictTime += mid.Sub(start)
	w.stats.InsertTime += time.Since(mid)
	return evicted
}

// placeAll places the admitted points, each with the ones before it as
// mates, on up to InsertWorkers goroutines, and returns their placements
// in order. The goroutines only read the window; each has a searcher of
// its own, and the calling goroutine uses the main one.
func (w *Window) placeAll(adm []admitted) []placement {
	for len(w.placements) < len(adm) {
		w.placements = append(w.placements, placement{})
	}
	pls := w.placements[:len(adm)]
	searchers := w.graph.searchers(min(w.cfg.InsertWorkers, len(adm)))
	var next atomic.Int64
	run := func(s *searcher) {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(adm) {
				return
			}
			w.place(s, adm[i].slot, adm[i].level, adm[:i], &pls[i])
		}
	}
	var wg sync.WaitGroup
	for _, s := range searchers[1:] {
		wg.Go(func() { run(s) })
	}
	run(searchers[0])
	wg.Wait()
	return pls
}
