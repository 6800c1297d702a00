package spectral

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/online/linalg"
	"streamer/synth"
	"streamer/vector"
)

// TestSRGramUpdateMatchesSum slides a window over rows, revealing labels
// as it goes (with γ ≠ 1, so that a label changes a row's weight), and
// checks that the Gram matrix updated from the last solve's equals the one
// summed from every row, that a large change is summed again, and that a
// window without its rows or keys is never updated.
func TestSRGramUpdateMatchesSum(t *testing.T) {
	const n, dim, step = 300, 12, 7
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: 2*n + 20*step, Dim: dim, Clusters: 3, Spread: 0.8, Seed: 3})
	labeled := func(key uint64, solve int) bool { return key%5 == 0 || (key%3 == 0 && int(key)%11 < solve) }
	problem := func(first, solve int, withRows bool) (*srProblem, []float64) {
		rows := xs[first : first+n]
		keys := make([]uint64, n)
		labels := make([]string, n)
		for i := range keys {
			keys[i] = uint64(first + i)
			if labeled(keys[i], solve) {
				labels[i] = "a"
			}
		}
		data := Problem{X: linalg.NewDense(rows, dim, 0), Labels: labels, Keys: keys}
		if withRows {
			data.Rows = rows
		}
		p := &srProblem{data: data, params: Settings{Gamma: 0.5}, class: make([]int, n)}
		for i, l := range labels {
			p.class[i] = -1
			if l != "" {
				p.class[i] = 0
			}
		}
		return p, p.rowScales()
	}
	var prev *srGram
	for solve := range 12 {
		p, scale := problem(solve*step, solve, true)
		got := mustGram(t, p, scale, prev)
		if solve > 0 && got.updates != solve {
			t.Fatalf("solve %d: %d updates since the sum, want %d", solve, got.updates, solve)
		}
		want := mustSummed(t, p, scale)
		if d := symDistance(got.g, want); d > 1e-9 {
			t.Fatalf("solve %d: updated Gram differs from the sum by %g", solve, d)
		}
		prev = got
	}
	// A row under a known key but with other values (mapped again) is a
	// new row.
	p, scale := problem(11*step, 11, true)
	mapped := slices.Clone(p.data.Rows)
	for i := range 10 {
		mapped[i] = vector.Dense(slices.Clone(mapped[i].Values))
		mapped[i].Values[0] *= 2
	}
	p.data.Rows, p.data.X = mapped, linalg.NewDense(mapped, dim, 0)
	if d := symDistance(mustGram(t, p, scale, prev).g, mustSummed(t, p, scale)); d > 1e-9 {
		t.Errorf("rows mapped again under the same keys: the Gram differs from the sum by %g", d)
	}
	p, scale = problem(12*step+n/2, 12, true)
	if g := mustGram(t, p, scale, prev); g.updates != 0 {
		t.Errorf("half the rows changed, but the Gram was updated (%d updates)", g.updates)
	}
	p, scale = problem(13*step, 13, false)
	if g := mustGram(t, p, scale, prev); g.updates != 0 || g.rows != nil {
		t.Errorf("a window without its rows was updated (%d updates) or kept for updates", g.updates)
	}
	p, scale = problem(13*step, 13, true)
	p.data.Keys = nil
	if g := mustGram(t, p, scale, prev); g.updates != 0 || g.rows != nil {
		t.Errorf("a window without keys was updated (%d updates) or kept for updates", g.updates)
	}
}

// mustGram is gramFor on p's rows, which must not fail.
func mustGram(t *testing.T, p *srProblem, scale []float64, prev *srGram) *srGram {
	t.Helper()
	g, err := p.gramFor(context.Background(), p.data.X.(*linalg.Dense), scale, prev)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// mustSummed is summedGram of p's rows, which must not fail.
func mustSummed(t *testing.T, p *srProblem, scale []float64) *mat.SymDense {
	t.Helper()
	g, err := summedGram(context.Background(), p.data.X.(*linalg.Dense), scale)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// symDistance returns max |a_ij - b_ij| / max(1, |b_ij|).
func symDistance(a, b *mat.SymDense) float64 {
	n := b.SymmetricDim()
	worst := 0.0
	for i := range n {
		for j := i; j < n; j++ {
			worst = max(worst, math.Abs(a.At(i, j)-b.At(i, j))/max(1, math.Abs(b.At(i, j))))
		}
	}
	return worst
}

// TestSRSharedRidgeObjective checks the objective the shared Gram path
// reports, from its normal equations, against the objective evaluated over
// the rows at the weights it returns.
func TestSRSharedRidgeObjective(t *testing.T) {
	data, _, _ := spectralData(t, 400, 6, 3, 0.1, 9)
	classes := classesOf(data.Labels)
	p, err := newSRProblem(data, Settings{Alpha: 0.3, Gamma: 0.7}.withDefaults(), classes)
	if err != nil {
		t.Fatal(err)
	}
	ys := [][]float64{make([]float64, 400), make([]float64, 400)}
	for i := range 400 {
		ys[0][i], ys[1][i] = math.Sin(float64(i)), float64(i%7)-3
	}
	sols, ok, err := p.ridgeShared(ys, p.startFactor(context.Background(), nil))
	if err != nil || !ok {
		t.Fatal("the shared path refused a dense window")
	}
	x, scale := data.X.(*linalg.Dense), p.rowScales()
	for k, sol := range sols {
		w := sol.W
		var f float64
		for i := range 400 {
			if scale[i] == 0 {
				continue
			}
			e := scale[i]*(vectorDot(x.Row(i), w)+w[x.Cols()]) - ys[k][i]
			f += e * e
		}
		f = (f + p.params.Alpha*linalg.Dot(w, w)) / 2
		if got := sol.Stats.Objective; math.Abs(got-f) > 1e-9*f {
			t.Errorf("response %d: reported objective %v, over the rows %v", k, got, f)
		}
	}
}

func vectorDot(a, w []float64) float64 {
	var s float64
	for j, v := range a {
		s += v * w[j]
	}
	return s
}
