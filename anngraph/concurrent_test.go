package anngraph

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamer/vector"
)

// TestConcurrentInsertAndSolve runs the ingest path (Insert) against the
// solver's path (Snapshot, Laplacian, products) at the same time. Run it with
// -race. Each view must stay consistent while the window moves on.
func TestConcurrentInsertAndSolve(t *testing.T) {
	data := sparseData(1500, 30)
	w, err := New(Config{MaxExamples: 200, K: 5, M: 6})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range data[:300] {
		if _, err := w.Insert(uint64(i), time.Time{}, x); err != nil {
			t.Fatal(err)
		}
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		for i, x := range data[300:] {
			if _, err := w.Insert(uint64(300+i), time.Time{}, x); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			// At least a few solves, then as many as the inserts leave time for.
			for round := 0; round < 3 || !done.Load(); round++ {
				v := w.Snapshot()
				if err := solveOnce(v); err != nil {
					t.Error(err)
					return
				}
				_ = w.Len()
				_ = w.Stats()
			}
		})
	}
	wg.Wait()
}

// TestConcurrentInserts has several goroutines insert into one window and
// search it at once, as callers that share a window may: Insert and Search
// take the window's lock, and the graph's scratch (float32 query rows,
// scattered queries, visit marks) must stay the window's alone. Run it with
// -race. Every key inserted is then live or evicted exactly once, and the
// structures hold their invariants.
func TestConcurrentInserts(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		data []vector.Vector
	}{
		{"dense", Config{MaxExamples: 300, K: 5, M: 6, Metric: Euclidean}, denseData(1200, 24, 31)},
		{"sparse", Config{MaxExamples: 300, K: 5, M: 6}, sparseData(1200, 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			const writers = 3
			evicted := make([][]uint64, writers)
			var wg sync.WaitGroup
			for g := range writers {
				wg.Go(func() {
					for i := g; i < len(tc.data); i += writers {
						ev, err := w.Insert(uint64(i), time.Time{}, tc.data[i])
						if err != nil {
							t.Error(err)
							return
						}
						evicted[g] = append(evicted[g], ev...)
						if i%50 == 0 {
							if _, err := w.Search(tc.data[i], 5); err != nil {
								t.Error(err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			gone := map[uint64]bool{}
			for _, ev := range evicted {
				for _, k := range ev {
					if gone[k] {
						t.Fatalf("key %d evicted twice", k)
					}
					gone[k] = true
				}
			}
			if got := w.Len() + len(gone); got != len(tc.data) {
				t.Fatalf("%d live + %d evicted ≠ %d inserted", w.Len(), len(gone), len(tc.data))
			}
			checkInvariants(t, w, gone)
		})
	}
}

// solveOnce does what a solve does with a view: read it and run products
// with its Laplacian, from two goroutines sharing the operator.
func solveOnce(v *View) error {
	n := v.Len()
	for i := range n {
		for _, nb := range v.Neighbors(i) {
			if nb.Row < 0 || nb.Row >= n || nb.Row == i {
				return errorf("row %d lists row %d of %d", i, nb.Row, n)
			}
		}
		_ = v.Vector(i).NNZ()
	}
	l, err := v.Laplacian(LaplacianConfig{Normalized: true, Degree: 3})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for g := range 2 {
		wg.Go(func() {
			o := make([]float64, n)
			for i := range o {
				o[i] = float64(i%7) - 3
			}
			f := make([]float64, l.FactorRows())
			back := make([]float64, n)
			m := make([]float64, n)
			l.MulFactor(f, o)
			l.MulFactorTrans(back, f)
			l.Mul(m, o)
			for i := range m {
				if math.Abs(m[i]-back[i]) > 1e-9*(1+math.Abs(m[i])) {
					errs[g] = errorf("BᵀB·o ≠ M·o at %d: %v vs %v", i, back[i], m[i])
					return
				}
			}
		})
	}
	wg.Wait()
	if errs[0] != nil {
		return errs[0]
	}
	return errs[1]
}
