package anngraph

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/vector"
)

// denseLaplacian builds M = L^p from the view's vectors directly: W from
// the symmetrized lists, with weights computed from the vectors, not from
// the listed distances.
func denseLaplacian(v *View, cfg LaplacianConfig) *mat.Dense {
	n := v.Len()
	euclid := func(i, j int) float64 { return math.Sqrt(vector.SquaredDistance(v.Vector(i), v.Vector(j))) }
	sigma := cfg.Sigma
	if sigma == 0 {
		var sum float64
		var count int
		for i := range n {
			for _, nb := range v.Neighbors(i) {
				sum += euclid(i, nb.Row)
				count++
			}
		}
		sigma = sum / float64(count)
	}
	weight := func(i, j int) float64 {
		switch cfg.Weights {
		case Binary:
			return 1
		case CosineSimilarity:
			a, b := v.Vector(i), v.Vector(j)
			if a.Norm() == 0 || b.Norm() == 0 {
				return 0
			}
			return math.Max(vector.Dot(a, b)/(a.Norm()*b.Norm()), 0)
		}
		d := euclid(i, j)
		return math.Exp(-d * d / (2 * sigma * sigma))
	}
	W := mat.NewDense(n, n, nil)
	for i := range n {
		for _, nb := range v.Neighbors(i) {
			w := weight(i, nb.Row)
			W.Set(i, nb.Row, w)
			W.Set(nb.Row, i, w)
		}
	}
	L := mat.NewDense(n, n, nil)
	deg := make([]float64, n)
	for i := range n {
		for j := range n {
			deg[i] += W.At(i, j)
		}
	}
	for i := range n {
		for j := range n {
			switch {
			case !cfg.Normalized:
				if i == j {
					L.Set(i, j, deg[i]-W.At(i, j))
				} else {
					L.Set(i, j, -W.At(i, j))
				}
			case deg[i] == 0 || deg[j] == 0:
				// Chung's convention: isolated vertices are all 0.
			case i == j:
				L.Set(i, j, 1-W.At(i, j)/deg[i])
			default:
				L.Set(i, j, -W.At(i, j)/math.Sqrt(deg[i]*deg[j]))
			}
		}
	}
	p := max(cfg.Degree, 1)
	M := mat.DenseCopyOf(L)
	for range p - 1 {
		var next mat.Dense
		next.Mul(M, L)
		M = &next
	}
	return M
}

// operatorMatrix applies f to each unit vector of length cols to get the
// rows × cols matrix of the operator.
func operatorMatrix(rows, cols int, f func(dst, src []float64)) *mat.Dense {
	A := mat.NewDense(rows, cols, nil)
	e := make([]float64, cols)
	col := make([]float64, rows)
	for j := range cols {
		clear(e)
		e[j] = 1
		f(col, e)
		A.SetCol(j, col)
	}
	return A
}

func checkClose(t *testing.T, what string, got, want mat.Matrix) {
	t.Helper()
	r, c := want.Dims()
	if gr, gc := got.Dims(); gr != r || gc != c {
		t.Fatalf("%s: %d×%d, want %d×%d", what, gr, gc, r, c)
	}
	scale := math.Max(mat.Norm(want, math.Inf(1)), 1)
	for i := range r {
		for j := range c {
			g, w := got.At(i, j), want.At(i, j)
			if math.IsNaN(g) || math.Abs(g-w) > 1e-10*scale {
				t.Fatalf("%s[%d,%d] = %v, want %v", what, i, j, g, w)
			}
		}
	}
}

func TestLaplacianMatchesDenseReference(t *testing.T) {
	dense, _ := Build(denseData(40, 5, 20), Config{K: 4, Metric: Euclidean, Exhaustive: true})
	sparse, _ := Build(sparseData(40, 21), Config{K: 5, Metric: Cosine, Exhaustive: true})
	// A zero vector has cosine 0 with all: with cosine weights it is an
	// isolated vertex of the weighted graph.
	withZero := append(denseData(30, 4, 22), vector.Dense(make([]float64, 4)))
	zero, _ := Build(withZero, Config{K: 3, Metric: Cosine, Exhaustive: true})
	views := map[string]*View{"dense euclidean": dense, "sparse cosine": sparse, "zero vector": zero}
	for name, v := range views {
		for _, kind := range []WeightKind{Heat, CosineSimilarity, Binary} {
			for _, normalized := range []bool{false, true} {
				for _, p := range []int{0, 1, 2, 3, 4} {
					cfg := LaplacianConfig{Normalized: normalized, Degree: p, Weights: kind}
					t.Run(fmt.Sprintf("%s/%v/normalized=%v/p=%d", name, kind, normalized, p), func(t *testing.T) {
						l, err := v.Laplacian(cfg)
						if err != nil {
							t.Fatal(err)
						}
						n := v.Len()
						want := denseLaplacian(v, cfg)
						checkClose(t, "M", operatorMatrix(n, n, l.Mul), want)
						B := operatorMatrix(l.FactorRows(), n, l.MulFactor)
						var BtB mat.Dense
						BtB.Mul(B.T(), B)
						checkClose(t, "BᵀB", &BtB, want)
						Bt := operatorMatrix(n, l.FactorRows(), l.MulFactorTrans)
						checkClose(t, "Bᵀ", Bt, B.T())
						var s float64
						if normalized {
							s = float64(n)
						} else {
							for e := range l.Edges() {
								_, _, w := l.Edge(e)
								s += 2 * w
							}
						}
						if l.Scale() != s {
							t.Fatalf("Scale = %v, want %v", l.Scale(), s)
						}
					})
				}
			}
		}
	}
}

func TestLaplacianEdgesAreSymmetrized(t *testing.T) {
	v, _ := Build(denseData(50, 4, 23), Config{K: 3, Metric: Euclidean, Exhaustive: true})
	l, err := v.Laplacian(LaplacianConfig{Weights: Binary})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]int]bool{}
	for i := range v.Len() {
		for _, nb := range v.Neighbors(i) {
			want[[2]int{min(i, nb.Row), max(i, nb.Row)}] = true
		}
	}
	if l.Edges() != len(want) {
		t.Fatalf("%d edges, want %d", l.Edges(), len(want))
	}
	for e := range l.Edges() {
		i, j, _ := l.Edge(e)
		if i >= j || !want[[2]int{i, j}] {
			t.Fatalf("edge %d = {%d, %d}", e, i, j)
		}
	}
}

// TestLaplacianRankGivesTheSmallerGraphs checks that the edges of rank
// below p are the symmetrized p-NN graph that a view built with K = p
// has, for every p up to the view's K.
func TestLaplacianRankGivesTheSmallerGraphs(t *testing.T) {
	data := denseData(80, 5, 29)
	v, _ := Build(data, Config{K: 6, Metric: Euclidean, Exhaustive: true})
	l, err := v.Laplacian(LaplacianConfig{Weights: Binary})
	if err != nil {
		t.Fatal(err)
	}
	for p := 1; p <= 6; p++ {
		small, _ := Build(data, Config{K: p, Metric: Euclidean, Exhaustive: true})
		want := map[[2]int]bool{}
		for i := range small.Len() {
			for _, nb := range small.Neighbors(i) {
				want[[2]int{min(i, nb.Row), max(i, nb.Row)}] = true
			}
		}
		got := 0
		for e := range l.Edges() {
			if l.Rank(e) >= p {
				continue
			}
			got++
			if i, j, _ := l.Edge(e); !want[[2]int{i, j}] {
				t.Fatalf("p = %d: edge {%d, %d} of rank %d is not in the %d-NN graph", p, i, j, l.Rank(e), p)
			}
		}
		if got != len(want) {
			t.Fatalf("p = %d: %d edges of rank below p, the %d-NN graph has %d", p, got, p, len(want))
		}
	}
}

func TestLaplacianSigma(t *testing.T) {
	v, _ := Build(sparseData(60, 24), Config{K: 4, Metric: Cosine, Exhaustive: true})
	l, _ := v.Laplacian(LaplacianConfig{})
	var sum float64
	var count int
	for i := range v.Len() {
		for _, nb := range v.Neighbors(i) {
			sum += math.Sqrt(vector.SquaredDistance(v.Vector(i), v.Vector(nb.Row)))
			count++
		}
	}
	if want := sum / float64(count); math.Abs(l.Sigma()-want) > 1e-12 {
		t.Fatalf("σ = %v, want the mean kNN distance %v", l.Sigma(), want)
	}
	if l2, _ := v.Laplacian(LaplacianConfig{Sigma: 0.3}); l2.Sigma() != 0.3 {
		t.Fatalf("σ = %v, want 0.3 as set", l2.Sigma())
	}
}

func TestLaplacianConfigValidate(t *testing.T) {
	v, _ := Build(denseData(5, 2, 25), Config{K: 2, Exhaustive: true})
	for _, cfg := range []LaplacianConfig{{Degree: -1}, {Weights: 9}, {Sigma: -1}, {Sigma: math.NaN()}} {
		if _, err := v.Laplacian(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func TestLaplacianOfTinyViews(t *testing.T) {
	for n := range 3 {
		v, err := Build(denseData(n, 3, 26), Config{K: 2, Exhaustive: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, normalized := range []bool{false, true} {
			l, err := v.Laplacian(LaplacianConfig{Normalized: normalized, Degree: 3})
			if err != nil {
				t.Fatal(err)
			}
			o := make([]float64, n)
			for i := range o {
				o[i] = float64(i + 1)
			}
			dst := make([]float64, n)
			l.Mul(dst, o)
			f := make([]float64, l.FactorRows())
			l.MulFactor(f, o)
			l.MulFactorTrans(dst, f)
			for _, x := range append(dst, l.Scale()) {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("n=%d normalized=%v: %v", n, normalized, dst)
				}
			}
		}
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
