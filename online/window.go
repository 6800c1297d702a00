package online

import (
	"errors"
	"fmt"
	"time"

	"streamer/anngraph"
	"streamer/vector"
)

// rowWindow is where a Learner keeps the rows it learns from: the
// sliding-window kNN graph when the objective has a graph term, a plain
// window of rows otherwise (no neighbour search is wasted on them).
type rowWindow interface {
	Insert(key uint64, ts time.Time, v vector.Vector) (evicted []uint64, err error)
	// InsertBatch inserts the items in order, as Insert one after another
	// would, or none of them and an error.
	InsertBatch(items []anngraph.Item) (evicted []uint64, err error)
	Len() int
	Contains(key uint64) bool
	// EvictOldest evicts the oldest rows while evict holds for their
	// keys, and returns those keys.
	EvictOldest(evict func(key uint64) bool) []uint64
	// TooOldCount counts the rows refused on arrival for an event time more
	// than the age window before the newest seen.
	TooOldCount() uint64
	// snapshot returns a consistent view of the window, cheaply: the
	// caller holds the Learner's lock while it runs.
	snapshot() windowView
}

// windowView is a frozen window: keys and vectors in window order, and the
// graph when there is one.
type windowView struct {
	keys  []uint64
	vecs  []vector.Vector
	graph *anngraph.View
}

// laplacian builds the graph Laplacian of the view, or returns nil for a
// view without a graph. It is also the weighted graph SR reads.
func (v windowView) laplacian(cfg anngraph.LaplacianConfig) (*anngraph.Laplacian, error) {
	if v.graph == nil {
		return nil, nil
	}
	l, err := v.graph.Laplacian(cfg)
	if err != nil {
		return nil, fmt.Errorf("graph Laplacian: %w", err)
	}
	return l, nil
}

// graphWindow is the anngraph window.
type graphWindow struct{ *anngraph.Window }

func (g graphWindow) TooOldCount() uint64 { return g.Stats().Rejected }

func (g graphWindow) snapshot() windowView {
	view := g.Snapshot()
	v := windowView{keys: make([]uint64, view.Len()), vecs: make([]vector.Vector, view.Len()), graph: view}
	for i := range v.keys {
		v.keys[i], v.vecs[i] = view.Key(i), view.Vector(i)
	}
	return v
}

// plainWindow keeps rows in arrival order, evicting by count and by age like
// anngraph.Window, without a graph.
type plainWindow struct {
	maxExamples int
	maxAge      time.Duration
	keys        []uint64
	times       []time.Time
	vecs        []vector.Vector
	head        int // rows before head are gone; compacted now and then
	newest      time.Time
	present     map[uint64]bool
	tooOld      uint64
}

func newPlainWindow(maxExamples int, maxAge time.Duration) *plainWindow {
	return &plainWindow{maxExamples: maxExamples, maxAge: maxAge, present: map[uint64]bool{}}
}

var errDuplicateKey = errors.New("key already in the window")

func (w *plainWindow) Insert(key uint64, ts time.Time, v vector.Vector) ([]uint64, error) {
	if w.present[key] {
		return nil, fmt.Errorf("insert key %d: %w", key, errDuplicateKey)
	}
	var evicted []uint64
	if w.maxAge > 0 {
		if w.Len() > 0 && ts.Before(w.newest.Add(-w.maxAge)) {
			w.tooOld++
			return []uint64{key}, nil
		}
		if w.Len() == 0 || ts.After(w.newest) {
			w.newest = ts
		}
		for w.Len() > 0 && w.times[w.head].Before(w.newest.Add(-w.maxAge)) {
			evicted = append(evicted, w.evictOldest())
		}
	}
	for w.Len() >= w.maxExamples {
		evicted = append(evicted, w.evictOldest())
	}
	w.keys = append(w.keys, key)
	w.times = append(w.times, ts)
	w.vecs = append(w.vecs, v)
	w.present[key] = true
	return evicted, nil
}

// InsertBatch inserts the items one by one, after checking that none of
// their keys is in the window or twice among them.
func (w *plainWindow) InsertBatch(items []anngraph.Item) ([]uint64, error) {
	keys := make(map[uint64]bool, len(items))
	for _, it := range items {
		if w.present[it.Key] || keys[it.Key] {
			return nil, fmt.Errorf("insert key %d: %w", it.Key, errDuplicateKey)
		}
		keys[it.Key] = true
	}
	var evicted []uint64
	for _, it := range items {
		ev, err := w.Insert(it.Key, it.Time, it.Vec)
		if err != nil {
			return evicted, err // cannot happen: the keys were checked
		}
		evicted = append(evicted, ev...)
	}
	return evicted, nil
}

// evictOldest drops the oldest row. Arrival order stands in for event
// order: a late row is evicted by age once the rows before it are.
func (w *plainWindow) evictOldest() uint64 {
	key := w.keys[w.head]
	delete(w.present, key)
	w.vecs[w.head] = vector.Vector{}
	w.head++
	if w.head > len(w.keys)/2 && w.head > 1024 {
		w.keys = append(w.keys[:0], w.keys[w.head:]...)
		w.times = append(w.times[:0], w.times[w.head:]...)
		n := copy(w.vecs, w.vecs[w.head:])
		clear(w.vecs[n:])
		w.vecs = w.vecs[:n]
		w.head = 0
	}
	return key
}

func (w *plainWindow) EvictOldest(evict func(key uint64) bool) []uint64 {
	var keys []uint64
	for w.Len() > 0 && evict(w.keys[w.head]) {
		keys = append(keys, w.evictOldest())
	}
	return keys
}

func (w *plainWindow) Len() int { return len(w.keys) - w.head }

func (w *plainWindow) Contains(key uint64) bool { return w.present[key] }

func (w *plainWindow) TooOldCount() uint64 { return w.tooOld }

func (w *plainWindow) snapshot() windowView {
	return windowView{
		keys: append([]uint64(nil), w.keys[w.head:]...),
		vecs: append([]vector.Vector(nil), w.vecs[w.head:]...),
	}
}
