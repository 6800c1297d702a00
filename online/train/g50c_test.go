package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"streamer/anngraph"
	"streamer/internal/testlevel"
	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
	"streamer/online/newton"
	"streamer/synth"
	"streamer/vector"
)

// g50cSeed draws the g50c sample of this test. Its empirical Bayes error
// (the error of sign(x₀) on the 550 points) is 5.1%, close to the nominal
// 5%: g50c samples vary from 3.5% to 6.5% with the seed, which matters more
// than the algorithms' differences.
const g50cSeed = 4

// TestG50C runs the thesis's g50c protocol (Table 2.6): 10 random splits
// with l = 50 labeled points, transductive error on the other 500.
// The λ values were chosen on this sample. R = 0.5 is the known class
// prior. Large λ suits this data: 50 labels in 50 dimensions leave the
// direction poorly determined, and a strongly regularized transductive
// objective rewards the direction along which the unlabeled points spread.
func TestG50C(t *testing.T) {
	testlevel.Long(t, "numerical; no concurrency to race")
	xs, ys := synth.G50C(g50cSeed)
	if bayes := g50cBayesError(); bayes < 0.045 || bayes > 0.055 {
		t.Fatalf("sample's Bayes error %.4f is not near 5%%", bayes)
	}
	kernel := rbfKernelMap(xs)
	tests := []struct {
		name    string
		rows    []vector.Vector
		params  Params
		graph   newton.Laplacian
		maxRate float64
	}{
		{"svm", xs, Params{Algorithm: SVM, Lambda: 30}, nil, 0.09},
		{"tsvm", xs, Params{Algorithm: TSVM, Lambda: 300, LambdaU: 3, R: 0.5}, nil, 0.055},
		{"da", xs, Params{Algorithm: DA, Lambda: 300, LambdaU: 3, R: 0.5}, nil, 0.055},
		// On the raw features a kNN graph gives a linear model nothing:
		// a fifth of its edges join the two classes, so the graph term
		// penalizes the class direction more than the 49 noise directions.
		{"lapsvm", xs, Params{Algorithm: LapSVM, Lambda: 300, LambdaI: 1},
			g50cGraph(t, xs, 15, anngraph.LaplacianConfig{}), 0.09},
		// The thesis's LapSVM (5.4%) is a kernel machine: a Gaussian
		// kernel deformed by L^p. Over the map of that kernel with every
		// row a landmark the linear solver solves the same problem
		// (TestLapSVMOverKernelMapIsKernelLapSVM), and a smooth L^p lets
		// the function stay flat inside each class and change between
		// them. k = 50 and p = 8 were chosen on two other g50c samples
		// (seeds 1 and 2); on seeds 3 to 9 they give 5.3% to 6.9%, 1.2
		// points above each sample's Bayes error on average. λ = 10⁻⁶ is
		// the thesis's γ_A.
		{"lapsvm, Gaussian kernel map", kernel, Params{Algorithm: LapSVM, Lambda: 1e-6, LambdaI: 100},
			g50cGraph(t, xs, 50, anngraph.LaplacianConfig{Normalized: true, Degree: 8}), 0.06},
	}
	for _, tt := range tests {
		rate := g50cError(t, tt.rows, ys, tt.params, tt.graph)
		t.Logf("%s: transductive error %.2f%%", tt.name, 100*rate)
		if rate > tt.maxRate {
			t.Errorf("%s: error %.2f%% above %.1f%%", tt.name, 100*rate, 100*tt.maxRate)
		}
	}
}

func g50cBayesError() float64 {
	xs, ys := synth.G50C(g50cSeed)
	errs := 0
	for i := range xs {
		if (xs[i].Values[0] >= 0) != (ys[i] > 0) {
			errs++
		}
	}
	return float64(errs) / float64(len(xs))
}

// g50cError returns the mean transductive error over 10 splits.
func g50cError(t *testing.T, xs []vector.Vector, ys []float64, p Params, graph newton.Laplacian) float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 5))
	dim := xs[0].NNZ()
	x := linalg.NewVectorRows(xs, dim, 1)
	var errs, total int
	for range 10 {
		y := make([]float64, len(xs))
		for _, i := range r.Perm(len(xs))[:50] {
			y[i] = ys[i]
		}
		sol, err := newton.Solve(context.Background(), newton.Problem{X: x, Y: y, Laplacian: graph}, p.Binary(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range xs {
			if y[i] != 0 {
				continue
			}
			if (xs[i].DotDense(sol.W)+sol.W[dim] >= 0) != (ys[i] > 0) {
				errs++
			}
			total++
		}
	}
	return float64(errs) / float64(total)
}

// g50cGraph returns the Laplacian of the exact k-NN graph of the raw
// points (heat weights), built as `fit` builds it.
func g50cGraph(t *testing.T, xs []vector.Vector, k int, cfg anngraph.LaplacianConfig) newton.Laplacian {
	t.Helper()
	return onlinetest.AnnLaplacian(t, xs, anngraph.Config{K: k, Metric: anngraph.Euclidean, Exhaustive: true}, cfg)
}

// TestRBFKernelMap checks that the feature map reproduces the kernel's
// inner products, which is what makes a linear solve over it the kernel
// machine.
func TestRBFKernelMap(t *testing.T) {
	xs, _ := synth.Gaussians(3, 40, 5, 1)
	phi := rbfKernelMap(xs)
	var sigma float64
	for i := range xs {
		for j := range i {
			sigma += math.Sqrt(vector.SquaredDistance(xs[i], xs[j]))
		}
	}
	sigma /= float64(len(xs) * (len(xs) - 1) / 2)
	for i := range xs {
		for j := range xs {
			want := math.Exp(-vector.SquaredDistance(xs[i], xs[j]) / (2 * sigma * sigma))
			if got := vector.Dot(phi[i], phi[j]); math.Abs(got-want) > 1e-9 {
				t.Fatalf("⟨φ(x_%d), φ(x_%d)⟩ = %v, kernel %v", i, j, got, want)
			}
		}
	}
}
