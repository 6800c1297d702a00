package anngraph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"streamer/vector"
)

// BenchConfig describes a run of RunBench.
type BenchConfig struct {
	// Window configures the window the points stream through; its
	// MaxExamples is the window length.
	Window Config
	// Sample is the number of live points whose kNN lists are checked
	// against brute force at the end; 0 means 1000.
	Sample int
	// Seed chooses the sample.
	Seed uint64
}

// BenchReport is what RunBench measured. The first eight fields are those
// of `streamer bench ann`'s report.
type BenchReport struct {
	Points int `json:"points"` // points streamed
	Window int `json:"window"` // window length (MaxExamples)
	K      int `json:"k"`
	// RecallAtK is the mean, over the sampled live points, of the fraction
	// of the point's K listed neighbours that are among its K exact nearest
	// in the live window (ties at the K-th distance count as hits).
	RecallAtK float64 `json:"recall_at_k"`
	// InsertsPerSec is inserts per second of insert work, evictions
	// excluded; EvictionsPerSec is evictions per second of eviction work,
	// list and link repairs included.
	InsertsPerSec   float64 `json:"inserts_per_sec"`
	EvictionsPerSec float64 `json:"evictions_per_sec"`
	// QueriesPerSec is the rate of Window.Search for K neighbours of the
	// sampled points' vectors, with EfSearch.
	QueriesPerSec float64 `json:"queries_per_sec"`
	// BytesPerPoint is IndexBytesPerPoint + VectorBytesPerPoint.
	BytesPerPoint float64 `json:"bytes_per_point"`

	// IndexBytesPerPoint is the live heap the window holds beyond the
	// vectors it was given (runtime.MemStats.HeapAlloc after a GC, less the
	// same before New), divided by the points held: graph links, kNN
	// lists, keys, times, norms, scratch.
	IndexBytesPerPoint float64 `json:"index_bytes_per_point"`
	// VectorBytesPerPoint is the mean size of the values and indices of the
	// vectors held, which the window keeps but the caller allocated.
	VectorBytesPerPoint float64 `json:"vector_bytes_per_point"`
	WindowsSlid         float64 `json:"windows_slid"` // evictions / window length
	Sample              int     `json:"sample"`
	SearchRecallAtK     float64 `json:"search_recall_at_k"` // of Window.Search
	StreamPointsPerSec  float64 `json:"stream_points_per_sec"`
	StreamSeconds       float64 `json:"stream_seconds"`
	DistancesPerInsert  float64 `json:"distances_per_insert"`
	ListRepairs         uint64  `json:"list_repairs"`
	Metric              string  `json:"metric"`
	M                   int     `json:"m"`
	EfConstruction      int     `json:"ef_construction"`
	EfSearch            int     `json:"ef_search"`
	ListDepth           int     `json:"list_depth"`
	Exhaustive          bool    `json:"exhaustive"`
}

// RunBench streams points through a window in order (key i, event time
// i milliseconds after the Unix epoch), then measures the kNN lists of a
// sample of the live points against exact brute-force kNN over the live
// window, and the rate of searches. Give it at least six window lengths of
// points for the lists to be measured after the window slid five lengths.
func RunBench(ctx context.Context, cfg BenchConfig, points []vector.Vector) (BenchReport, error) {
	if cfg.Sample == 0 {
		cfg.Sample = 1000
	}
	if cfg.Sample < 0 {
		return BenchReport{}, fmt.Errorf("anngraph: bench: Sample = %d, must not be negative", cfg.Sample)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	w, err := New(cfg.Window)
	if err != nil {
		return BenchReport{}, err
	}
	start := time.Now()
	for i, p := range points {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return BenchReport{}, err
			}
		}
		if _, err := w.Insert(uint64(i), time.UnixMilli(int64(i)), p); err != nil {
			return BenchReport{}, fmt.Errorf("anngraph: bench: point %d: %w", i, err)
		}
	}
	streamed := time.Since(start)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	view := w.Snapshot()
	st := w.Stats()
	c := w.Config()
	r := BenchReport{
		Points:             len(points),
		Window:             c.MaxExamples,
		K:                  c.K,
		InsertsPerSec:      rate(st.Inserts, st.InsertTime),
		EvictionsPerSec:    rate(st.Evictions, st.EvictTime),
		WindowsSlid:        float64(st.Evictions) / float64(c.MaxExamples),
		StreamPointsPerSec: rate(uint64(len(points)), streamed),
		StreamSeconds:      streamed.Seconds(),
		ListRepairs:        st.ListRepairs,
		Metric:             c.Metric.String(),
		M:                  c.M,
		EfConstruction:     c.EfConstruction,
		EfSearch:           c.EfSearch,
		ListDepth:          c.ListDepth,
		Exhaustive:         c.Exhaustive,
	}
	if st.Inserts > 0 {
		r.DistancesPerInsert = float64(st.Distances) / float64(st.Inserts)
	}
	n := view.Len()
	if n == 0 {
		return r, nil
	}
	r.IndexBytesPerPoint = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	var vb int
	for i := range n {
		x := view.Vector(i)
		vb += 8*len(x.Values) + 4*len(x.Indices)
	}
	r.VectorBytesPerPoint = float64(vb) / float64(n)
	r.BytesPerPoint = r.IndexBytesPerPoint + r.VectorBytesPerPoint

	rows := sampleRows(n, cfg.Sample, cfg.Seed)
	r.Sample = len(rows)
	exact, err := exactKNN(ctx, view, rows, c.K)
	if err != nil {
		return BenchReport{}, err
	}
	var hits, total float64
	for s, i := range rows {
		h, t := recall(view.Neighbors(i), exact[s], c.K)
		hits += h
		total += t
	}
	r.RecallAtK = hits / max(total, 1)

	hits, total = 0, 0
	start = time.Now()
	for s, i := range rows {
		got, err := w.Search(view.Vector(i), c.K+1)
		if err != nil {
			return BenchReport{}, err
		}
		var nb []Neighbor
		for _, m := range got {
			if m.Key != view.Key(i) && len(nb) < c.K {
				nb = append(nb, Neighbor{Distance: m.Distance})
			}
		}
		h, t := recall(nb, exact[s], c.K)
		hits += h
		total += t
	}
	r.QueriesPerSec = rate(uint64(len(rows)), time.Since(start))
	r.SearchRecallAtK = hits / max(total, 1)
	runtime.KeepAlive(w)
	return r, nil
}

func rate(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// sampleRows draws up to s distinct rows of n, in increasing order.
func sampleRows(n, s int, seed uint64) []int {
	if s >= n {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	r := rand.New(rand.NewPCG(seed, 0x9b05688c2b3e6c1f))
	rows := r.Perm(n)[:s]
	slices.Sort(rows)
	return rows
}

// recall counts the listed neighbours within the exact K-th distance.
func recall(listed []Neighbor, exact []float64, k int) (hits, total float64) {
	want := min(k, len(exact))
	if want == 0 {
		return 0, 0
	}
	kth := exact[want-1]
	tol := 1e-9 * max(1, math.Abs(kth))
	for _, nb := range listed[:min(len(listed), want)] {
		if nb.Distance <= kth+tol {
			hits++
		}
	}
	return hits, float64(want)
}

// exactKNN returns, for each of rows, the distances of its k nearest other
// rows of the view by brute force, nearest first, in the Metric's units.
func exactKNN(ctx context.Context, v *View, rows []int, k int) ([][]float64, error) {
	out := make([][]float64, len(rows))
	workers := min(runtime.GOMAXPROCS(0), 2)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for g := range workers {
		wg.Go(func() {
			b := bruteForce{v: v}
			for s := g; s < len(rows); s += workers {
				if err := ctx.Err(); err != nil {
					errs[g] = err
					return
				}
				out[s] = b.nearest(rows[s], k)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bruteForce computes exact distances from one row to all others. A sparse
// query is scattered into a dense buffer so that each distance costs one
// pass over the other row.
type bruteForce struct {
	v       *View
	scatter []float64
	ds      []float64
}

func (b *bruteForce) nearest(i, k int) []float64 {
	v := b.v
	q := v.vecs[i]
	if !q.IsDense() {
		for _, j := range q.Indices {
			if int(j) >= len(b.scatter) {
				b.scatter = slices.Grow(b.scatter, int(j)+1-len(b.scatter))[:int(j)+1]
			}
		}
		q.AddScaledTo(b.scatter, 1)
		defer func() {
			for _, j := range q.Indices {
				b.scatter[j] = 0
			}
		}()
	}
	b.ds = b.ds[:0]
	for j := range v.Len() {
		if j == i {
			continue
		}
		var dot float64
		if q.IsDense() {
			dot = vector.Dot(q, v.vecs[j])
		} else {
			x := v.vecs[j]
			for t, idx := range x.Indices {
				if int(idx) < len(b.scatter) {
					dot += x.Values[t] * b.scatter[idx]
				}
			}
		}
		b.ds = append(b.ds, v.distance(v.sq[i], v.sq[j], dot))
	}
	slices.Sort(b.ds)
	return slices.Clone(b.ds[:min(k, len(b.ds))])
}

// distance returns the distance in the Metric's units of two rows with the
// given squared norms and inner product.
func (v *View) distance(sqA, sqB, dot float64) float64 {
	if v.metric == Euclidean {
		return math.Sqrt(max(sqA+sqB-2*dot, 0))
	}
	if sqA == 0 || sqB == 0 {
		return 1
	}
	return min(max(1-dot/math.Sqrt(sqA*sqB), 0), 2)
}
