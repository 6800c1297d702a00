package anngraph

import (
	"sync"
	"time"

	"streamer/vector"
)

// Neighbor is an entry of a kNN list: a row of the same View and its
// distance, in the Metric's units.
type Neighbor struct {
	Row      int
	Distance float64
}

// View is an immutable snapshot of a window: its rows in insertion order,
// oldest first, each with its kNN list. It is safe for concurrent use.
type View struct {
	metric Metric
	k      int
	keys   []uint64
	times  []time.Time
	vecs   []vector.Vector
	sq     []float64 // ‖x‖²
	start  []int32   // row i's list is nbrs[start[i]:start[i+1]]
	nbrs   []Neighbor

	// layers, nil for an exhaustive window's view, is the HNSW graph that
	// Search descends; efSearch its default candidates; searches the
	// scratch of searches under way.
	layers   *layers
	efSearch int
	searches *sync.Pool
	// f32, for a view of dense rows in a graph window, holds them as
	// float32, each padded to stride values, for Search's distances.
	f32    []float32
	stride int
}

// Len returns the number of rows.
func (v *View) Len() int { return len(v.keys) }

// Metric returns the distance the lists were built with.
func (v *View) Metric() Metric { return v.metric }

// K returns the number of neighbours a full list holds.
func (v *View) K() int { return v.k }

// Key returns the key row i was inserted with.
func (v *View) Key(i int) uint64 { return v.keys[i] }

// Time returns the event time row i was inserted with.
func (v *View) Time(i int) time.Time { return v.times[i] }

// Vector returns row i's vector. The caller must not change it.
func (v *View) Vector(i int) vector.Vector { return v.vecs[i] }

// Neighbors returns row i's kNN list, nearest first: K entries, or fewer
// when the window holds K points or fewer. The caller must not change it.
func (v *View) Neighbors(i int) []Neighbor { return v.nbrs[v.start[i]:v.start[i+1]] }
