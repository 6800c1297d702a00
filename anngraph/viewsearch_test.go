package anngraph

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"streamer/anngraph/anngraphtest"
	"streamer/vector"
)

// exactFrom returns the distances from q to its k nearest rows of v, by
// brute force.
func exactFrom(v *View, q vector.Vector, k int) []float64 {
	qsq := q.SquaredNorm()
	var all []float64
	for j := range v.Len() {
		all = append(all, v.distance(qsq, v.sq[j], vector.Dot(q, v.Vector(j))))
	}
	slices.Sort(all)
	return all[:min(k, len(all))]
}

// slidWindow fills a window of size n from xs[:2n], so that half its
// points were evicted, and returns its view.
func slidWindow(t *testing.T, cfg Config, xs []vector.Vector) *View {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		if _, err := w.Insert(uint64(i), time.Time{}, x); err != nil {
			t.Fatal(err)
		}
	}
	return w.Snapshot()
}

// TestViewSearchFindsTheNearest: searching a view of a slid window for
// points it does not hold finds their nearest rows as brute force does,
// on dense and sparse rows, and each found row is at its stated distance.
func TestViewSearchFindsTheNearest(t *testing.T) {
	const n, k = 1000, 10
	cases := []struct {
		name   string
		metric Metric
		xs     []vector.Vector
	}{
		{"dense euclidean", Euclidean, denseData(2*n+200, 32, 3)},
		{"dense cosine", Cosine, denseData(2*n+200, 32, 4)},
		{"sparse cosine", Cosine, sparseData(2*n+200, 5)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := slidWindow(t, Config{MaxExamples: n, Metric: tc.metric, Seed: 1}, tc.xs[:2*n])
			var hits, total float64
			for _, q := range tc.xs[2*n:] {
				found := v.Search(q, k, 0)
				if len(found) != k {
					t.Fatalf("%d rows found, want %d", len(found), k)
				}
				listed := make([]float64, len(found))
				for i, f := range found {
					d := v.distance(q.SquaredNorm(), v.sq[f.Row], vector.Dot(q, v.Vector(f.Row)))
					if math.Abs(d-f.Distance) > 1e-9 {
						t.Fatalf("row %d found at %v, but it is at %v", f.Row, f.Distance, d)
					}
					if i > 0 && f.Distance < found[i-1].Distance {
						t.Fatalf("not nearest first: %v after %v", f.Distance, found[i-1].Distance)
					}
					listed[i] = d
				}
				h, tot := anngraphtest.Recall(listed, exactFrom(v, q, k), k)
				hits, total = hits+h, total+tot
			}
			if recall := hits / total; recall < 0.95 {
				t.Fatalf("recall@%d %.3f, want at least 0.95", k, recall)
			}
		})
	}
}

// TestViewSearchOfIslands: on clusters that share no kNN edge, the search
// still reaches the cluster of the query, which a walk over the kNN lists
// from a few entry points could not.
func TestViewSearchOfIslands(t *testing.T) {
	var xs []vector.Vector
	for c := range 30 {
		for i := range 40 {
			x := make([]float64, 8)
			x[c%8] = 100 * float64(1+c/8)
			x[(c+3)%8] += 0.01 * float64(i)
			xs = append(xs, vector.Dense(x))
		}
	}
	v := slidWindow(t, Config{MaxExamples: len(xs), Metric: Euclidean, Seed: 2}, xs)
	for c := range 30 {
		q := make([]float64, 8)
		q[c%8] = 100 * float64(1+c/8)
		found := v.Search(vector.Dense(q), 1, 0)
		if want := exactFrom(v, vector.Dense(q), 1)[0]; len(found) != 1 || found[0].Distance > want+1e-9 {
			t.Fatalf("cluster %d: found %v, nearest at %v", c, found, want)
		}
	}
}

// TestViewSearchOutlivesTheWindow: a view answers as it did after its
// window slid on and evicted its rows.
func TestViewSearchOutlivesTheWindow(t *testing.T) {
	xs := denseData(1200, 16, 7)
	w, err := New(Config{MaxExamples: 400, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs[:400] {
		w.Insert(uint64(i), time.Time{}, x)
	}
	v := w.Snapshot()
	before := v.Search(xs[1100], 5, 0)
	for i, x := range xs[400:1100] {
		w.Insert(uint64(400+i), time.Time{}, x)
	}
	after := v.Search(xs[1100], 5, 0)
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("found %v before the window slid, %v after", before, after)
		}
	}
}

// TestViewSearchConcurrently runs searches of one view from several
// goroutines (run with -race); each finds what a lone search finds.
func TestViewSearchConcurrently(t *testing.T) {
	xs := sparseData(900, 9)
	v := slidWindow(t, Config{MaxExamples: 600, Seed: 1}, xs[:800])
	want := make([][]Neighbor, 100)
	for i := range want {
		want[i] = v.Search(xs[800+i], 10, 0)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			for i := range want {
				got := v.Search(xs[800+i], 10, 0)
				for j := range got {
					if got[j] != want[i][j] {
						errs <- "a concurrent search found other rows"
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestViewSearchEdges: an exhaustive window's view is searched by brute
// force; a query of another kind, or an empty view, finds nothing.
func TestViewSearchEdges(t *testing.T) {
	xs := denseData(300, 8, 1)
	v := slidWindow(t, Config{MaxExamples: 200, Exhaustive: true, K: 5}, xs[:250])
	found := v.Search(xs[299], 7, 0)
	want := exactFrom(v, xs[299], 7)
	for i := range want {
		if math.Abs(found[i].Distance-want[i]) > 1e-12 {
			t.Fatalf("exhaustive view: found %v, want distances %v", found, want)
		}
	}
	if got := v.Search(vector.Dense(make([]float64, 9)), 3, 0); got != nil {
		t.Fatalf("a dense query of another length found %v", got)
	}
	if got := v.Search(vector.Sparse([]int32{1}, []float64{1}), 3, 0); got != nil {
		t.Fatalf("a sparse query of a dense view found %v", got)
	}
	empty, err := New(Config{MaxExamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Snapshot().Search(xs[0], 3, 0); got != nil {
		t.Fatalf("an empty view found %v", got)
	}
}
