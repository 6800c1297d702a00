package newton

import (
	"math/rand/v2"
	"slices"
	"testing"

	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
)

// TestCGLSOnWorkersMatchesOneWorker runs CGLS on vectors long enough for
// its vector passes to be split (reduce): two workers reach one worker's
// solution within the solve's tolerance, in the same number of iterations
// give or take one, and bitwise the same solution on every run.
func TestCGLSOnWorkersMatchesOneWorker(t *testing.T) {
	const n, d = 45000, 36000
	rows := onlinetest.RandomSparseRows(6, n, d, 12)
	r := rand.New(rand.NewPCG(6, 1))
	var sys cglsSystem
	for i := range n {
		if i%5 != 0 {
			sys.rows = append(sys.rows, i)
			sys.cost = append(sys.cost, 1/float64(n))
			sys.target = append(sys.target, float64(2*r.IntN(2)-1))
		}
	}
	solve := func(workers int) ([]float64, cglsResult) {
		x := linalg.NewCSR(rows, d, workers)
		if x.Cols() < linalg.VectorMinLen || len(sys.rows) < linalg.VectorMinLen {
			t.Fatalf("vectors of %d and %d entries are not split", x.Cols(), len(sys.rows))
		}
		s := &newton{x: x, d: x.Cols(), lambda: 1e-3}
		w := make([]float64, s.d+1)
		o := make([]float64, len(sys.rows))
		res := s.cgls(sys, w, o, nil, cglsStop{rel: 1e-8}, 2000)
		if !res.converged {
			t.Fatalf("%d workers: CGLS did not converge in %d iterations", workers, res.iters)
		}
		return w, res
	}
	ref, refRes := solve(1)
	w, res := solve(2)
	if rel := onlinetest.RelDiff(w, ref); rel > 1e-6 {
		t.Fatalf("two workers' solution is %.3g from one worker's", rel)
	}
	if diff := res.iters - refRes.iters; diff < -1 || diff > 1 {
		t.Fatalf("two workers took %d iterations, one worker %d", res.iters, refRes.iters)
	}
	again, _ := solve(2)
	if !slices.Equal(w, again) {
		t.Fatal("two workers' solutions differ between runs")
	}
}
