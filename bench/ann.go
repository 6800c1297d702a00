package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"streamer/anngraph"
	"streamer/anngraph/anngraphtest"
	"streamer/ingest"
	"streamer/synth"
	"streamer/vector"
)

// ANNConfig describes `streamer bench ann`.
type ANNConfig struct {
	// Data is a file of examples to stream (JSONL example schema or
	// LIBSVM, read by the default decoder, in file order), exclusive with
	// Generate: "dense" (clustered Gaussian points, synth.Clusters) or
	// "sparse" (text-like rows, synth.GenerateSparseText).
	Data, Generate string
	// Points, Dim and NNZ size generated points; 0 means six window
	// lengths, 784 dense or 2^18 sparse dimensions, and 80 non-zeros.
	Points, Dim, NNZ int
	// Metric is cosine or euclidean; empty means euclidean for dense
	// generated points and cosine otherwise. It sets Window.Metric.
	Metric string
	// Window configures the window the points stream through; its
	// MaxExamples is the window length.
	Window anngraph.Config
	// Sample is the number of live points whose kNN lists are checked
	// against brute force at the end; 0 means 1000.
	Sample int
	// Seed seeds the generated points, the graph's levels (it sets
	// Window.Seed) and the sample.
	Seed uint64
	// Batch, when positive, streams the points in batches of that many
	// (Window.InsertBatch, placed by Window.InsertWorkers goroutines);
	// 0 inserts them one by one (Window.Insert, one core), as hnswlib's
	// fill rate is measured.
	Batch int
	// Export, when set, names a file the points are written to before they
	// are streamed, in the format scripts/hnswlib/fill.cc reads (see
	// WritePoints), so that hnswlib can be timed on the same points.
	Export string
}

// ANNReport is what `streamer bench ann` prints.
type ANNReport struct {
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
	// FillInsertsPerSec is the rate of the first window length of inserts,
	// into an empty window that evicts nothing: what hnswlib's fill rate
	// (scripts/hnswlib/fill.cc, the same points) compares with.
	FillInsertsPerSec float64 `json:"fill_inserts_per_sec"`
	// FillCPUInsertsPerSec is the same inserts per second of the process's
	// CPU time (user and system, garbage collection included): on a
	// machine shared with other work it varies less than the wall-clock
	// rate. fill.cc reports both too.
	FillCPUInsertsPerSec float64 `json:"fill_cpu_inserts_per_sec"`
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
	// Batch and InsertWorkers say how the points went in: one by one
	// (batch 0) or in batches placed by that many goroutines.
	Batch         int `json:"batch"`
	InsertWorkers int `json:"insert_workers"`
}

// ANN reads or generates the points of cfg and streams them through the
// sliding-window kNN graph: it measures recall@k of the lists against
// brute force over the live window, insert, eviction and query rates, and
// memory per point.
func ANN(ctx context.Context, cfg ANNConfig) (ANNReport, error) {
	xs, metric, err := annPoints(cfg)
	if err != nil {
		return ANNReport{}, err
	}
	if cfg.Metric != "" {
		metric = cfg.Metric
	}
	if cfg.Window.Metric, err = anngraph.ParseMetric(metric); err != nil {
		return ANNReport{}, err
	}
	cfg.Window.Seed = cfg.Seed
	if cfg.Export != "" {
		if err := exportPoints(cfg.Export, xs); err != nil {
			return ANNReport{}, err
		}
	}
	return streamANN(ctx, cfg, xs)
}

// annPoints returns the points of cfg and the metric that suits them.
func annPoints(cfg ANNConfig) ([]vector.Vector, string, error) {
	points := orDefault(cfg.Points, 6*cfg.Window.MaxExamples)
	switch {
	case cfg.Data != "" && cfg.Generate != "":
		return nil, "", fmt.Errorf("--data and --generate exclude each other")
	case cfg.Data != "":
		recs, err := ingest.ReadAll(cfg.Data, nil)
		if err != nil {
			return nil, "", err
		}
		xs := make([]vector.Vector, len(recs))
		for i, r := range recs {
			xs[i] = r.Vector
		}
		return xs, "cosine", nil
	case cfg.Generate == "dense":
		xs, _ := synth.Clusters(synth.ClusterConfig{Points: points, Dim: orDefault(cfg.Dim, 784), Seed: cfg.Seed})
		return xs, "euclidean", nil
	case cfg.Generate == "sparse":
		return synth.GenerateSparseText(synth.SparseTextConfig{
			Rows: points, Dim: orDefault(cfg.Dim, 1<<18), NNZ: cfg.NNZ, Seed: cfg.Seed,
		}).Rows, "cosine", nil
	}
	return nil, "", fmt.Errorf("--generate %q: want dense or sparse (or give --data)", cfg.Generate)
}

// insertSome inserts the points from i on, key j and event time j
// milliseconds after the Unix epoch for point j: one (batch ≤ 0) or a
// batch of them that ends at the window's length at the latest, where the
// fill rate is taken. It returns how many it inserted.
func insertSome(w *anngraph.Window, points []vector.Vector, i, batch int) (int, error) {
	if batch <= 0 {
		_, err := w.Insert(uint64(i), time.UnixMilli(int64(i)), points[i])
		return 1, err
	}
	end := min(i+batch, len(points))
	if full := w.Config().MaxExamples; i < full {
		end = min(end, full)
	}
	items := make([]anngraph.Item, 0, end-i)
	for j := i; j < end; j++ {
		items = append(items, anngraph.Item{Key: uint64(j), Time: time.UnixMilli(int64(j)), Vec: points[j]})
	}
	_, err := w.InsertBatch(items)
	return end - i, err
}

// orDefault returns v when it is positive, def otherwise.
func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// streamANN streams points through a window in order (key i, event time
// i milliseconds after the Unix epoch), then measures the kNN lists of a
// sample of the live points against exact brute-force kNN over the live
// window, and the rate of searches. Give it at least six window lengths of
// points for the lists to be measured after the window slid five lengths.
func streamANN(ctx context.Context, cfg ANNConfig, points []vector.Vector) (ANNReport, error) {
	if cfg.Sample == 0 {
		cfg.Sample = 1000
	}
	if cfg.Sample < 0 {
		return ANNReport{}, fmt.Errorf("bench ann: Sample = %d, must not be negative", cfg.Sample)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	w, err := anngraph.New(cfg.Window)
	if err != nil {
		return ANNReport{}, err
	}
	t, err := streamPoints(ctx, w, points, cfg.Batch)
	if err != nil {
		return ANNReport{}, err
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	view := w.Snapshot()
	r := newANNReport(w, cfg, len(points), t)
	n := view.Len()
	if n == 0 {
		return r, nil
	}
	r.IndexBytesPerPoint = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	r.VectorBytesPerPoint = vectorBytesPerPoint(view)
	r.BytesPerPoint = r.IndexBytesPerPoint + r.VectorBytesPerPoint

	k := w.Config().K
	rows := anngraphtest.SampleRows(n, cfg.Sample, cfg.Seed)
	r.Sample = len(rows)
	exact, err := view.ExactDistances(ctx, rows, k)
	if err != nil {
		return ANNReport{}, err
	}
	r.RecallAtK = graphRecall(view, rows, exact, k)
	if r.QueriesPerSec, r.SearchRecallAtK, err = searchRecall(w, view, rows, exact, k); err != nil {
		return ANNReport{}, err
	}
	runtime.KeepAlive(w)
	return r, nil
}

// streamTimes is how long streaming the points took: until the window
// first filled (wall and CPU time), and in all.
type streamTimes struct {
	fill, fillCPU, streamed time.Duration
	filled                  int // points in the window when it first filled
}

// streamPoints inserts points into w in order, batch at a time (one by one
// when batch ≤ 0), sliding the window once it is full.
func streamPoints(ctx context.Context, w *anngraph.Window, points []vector.Vector, batch int) (streamTimes, error) {
	size := w.Config().MaxExamples
	var t streamTimes
	start, cpuStart := time.Now(), cpuTime()
	for i := 0; i < len(points); {
		if i == size {
			t.fill, t.fillCPU = time.Since(start), cpuTime()-cpuStart
		}
		if err := ctx.Err(); err != nil {
			return t, err
		}
		n, err := insertSome(w, points, i, batch)
		if err != nil {
			return t, fmt.Errorf("bench ann: point %d: %w", i, err)
		}
		i += n
	}
	t.streamed = time.Since(start)
	t.filled = min(len(points), size)
	if t.fill == 0 {
		t.fill, t.fillCPU = t.streamed, cpuTime()-cpuStart
	}
	return t, nil
}

// newANNReport reports the window's configuration and its insert and
// eviction rates after streaming points through it.
func newANNReport(w *anngraph.Window, cfg ANNConfig, points int, t streamTimes) ANNReport {
	st := w.Stats()
	c := w.Config()
	r := ANNReport{
		Points:               points,
		Window:               c.MaxExamples,
		K:                    c.K,
		InsertsPerSec:        rate(st.Inserts, st.InsertTime),
		EvictionsPerSec:      rate(st.Evictions, st.EvictTime),
		FillInsertsPerSec:    rate(uint64(t.filled), t.fill),
		FillCPUInsertsPerSec: rate(uint64(t.filled), t.fillCPU),
		WindowsSlid:          float64(st.Evictions) / float64(c.MaxExamples),
		StreamPointsPerSec:   rate(uint64(points), t.streamed),
		StreamSeconds:        t.streamed.Seconds(),
		ListRepairs:          st.ListRepairs,
		Metric:               c.Metric.String(),
		M:                    c.M,
		EfConstruction:       c.EfConstruction,
		EfSearch:             c.EfSearch,
		ListDepth:            c.ListDepth,
		Exhaustive:           c.Exhaustive,
		Batch:                max(cfg.Batch, 0),
		InsertWorkers:        c.InsertWorkers,
	}
	if cfg.Batch <= 0 {
		r.InsertWorkers = 1
	}
	if st.Inserts > 0 {
		r.DistancesPerInsert = float64(st.Distances) / float64(st.Inserts)
	}
	return r
}

// vectorBytesPerPoint is the mean size of the window's vectors: 8 bytes a
// value, 4 an index.
func vectorBytesPerPoint(view *anngraph.View) float64 {
	var b int
	for i := range view.Len() {
		x := view.Vector(i)
		b += 8*len(x.Values) + 4*len(x.Indices)
	}
	return float64(b) / float64(view.Len())
}

// graphRecall is the share of the sampled rows' graph neighbours that are
// among their exact k nearest.
func graphRecall(view *anngraph.View, rows []int, exact [][]float64, k int) float64 {
	nbs := make([][]anngraph.Neighbor, len(rows))
	for s, i := range rows {
		nbs[s] = view.Neighbors(i)
	}
	return listedRecall(view, rows, nbs, exact, k)
}

// searchRecall searches the window for each sampled row's k nearest (the
// row itself left out) and returns the queries per second and their
// recall.
func searchRecall(w *anngraph.Window, view *anngraph.View, rows []int, exact [][]float64, k int) (qps, recall float64, err error) {
	rowOf := make(map[uint64]int, view.Len())
	for i := range view.Len() {
		rowOf[view.Key(i)] = i
	}
	start := time.Now()
	found := make([][]anngraph.Match, len(rows))
	for s, i := range rows {
		if found[s], err = w.Search(view.Vector(i), k+1); err != nil {
			return 0, 0, err
		}
	}
	qps = rate(uint64(len(rows)), time.Since(start))
	nbs := make([][]anngraph.Neighbor, len(rows))
	for s, i := range rows {
		for _, m := range found[s] {
			if m.Key != view.Key(i) && len(nbs[s]) < k {
				nbs[s] = append(nbs[s], anngraph.Neighbor{Row: rowOf[m.Key]})
			}
		}
	}
	return qps, listedRecall(view, rows, nbs, exact, k), nil
}

// listedRecall is the share of the listed neighbours nbs[s] of each
// sampled row rows[s] that are among its exact k nearest.
func listedRecall(view *anngraph.View, rows []int, nbs [][]anngraph.Neighbor, exact [][]float64, k int) float64 {
	var hits, total float64
	for s, i := range rows {
		h, t := anngraphtest.Recall(exactly(view, i, nbs[s]), exact[s], k)
		hits += h
		total += t
	}
	return hits / max(total, 1)
}

func rate(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// exactly returns the distances from row i to its neighbours nb, computed
// exactly, in float64: a graph window's own are float32 for dense rows, and
// would miss the exact K-th distance by rounding.
func exactly(v *anngraph.View, i int, nb []anngraph.Neighbor) []float64 {
	out := make([]float64, len(nb))
	for r, x := range nb {
		out[r] = v.Distance(i, x.Row)
	}
	return out
}
