package online

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/synth"
)

// TestSRGramUpdateMatchesSum slides a window over rows, revealing labels
// as it goes (with γ ≠ 1, so that a label changes a row's weight), and
// checks that the Gram matrix updated from the last solve's equals the one
// summed from every row, that a large change is summed again, and that a
// window without its rows is never updated.
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
		data := TrainData{X: NewDense(rows, dim, 0), Labels: labels, Keys: keys}
		if withRows {
			data.Rows = rows
		}
		p := &srProblem{data: data, params: Params{SRGamma: 0.5}, class: make([]int, n)}
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
		got := p.gramFor(p.data.X.(*Dense), scale, prev)
		if solve > 0 && got.updates != solve {
			t.Fatalf("solve %d: %d updates since the sum, want %d", solve, got.updates, solve)
		}
		want := summedGram(p.data.X.(*Dense), scale)
		if d := symDistance(got.g, want); d > 1e-9 {
			t.Fatalf("solve %d: updated Gram differs from the sum by %g", solve, d)
		}
		prev = got
	}
	p, scale := problem(12*step+n/2, 12, true)
	if g := p.gramFor(p.data.X.(*Dense), scale, prev); g.updates != 0 {
		t.Errorf("half the rows changed, but the Gram was updated (%d updates)", g.updates)
	}
	p, scale = problem(13*step, 13, false)
	if g := p.gramFor(p.data.X.(*Dense), scale, prev); g.updates != 0 || g.rows != nil {
		t.Errorf("a window without its rows was updated (%d updates) or kept for updates", g.updates)
	}
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
