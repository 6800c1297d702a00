package train

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/anngraph"
	"streamer/online/kernel"
	"streamer/online/linalg"
	"streamer/online/newton"
	"streamer/synth"
	"streamer/vector"
)

// TestLapSVMOverKernelMapIsKernelLapSVM checks the representer argument of
// MATH.md "Kernel feature maps" end to end: LapSVM solved by the linear
// solver over the map with every row a landmark has the outputs of the
// kernel LapSVM f = Kα + b solved densely in α (same objective: squared
// hinge over l, λ/2 (αᵀKα + b²), λ_I/2 · fᵀMf / s).
func TestLapSVMOverKernelMapIsKernelLapSVM(t *testing.T) {
	rows, ys := synth.Gaussians(5, 60, 4, 1)
	y := make([]float64, len(rows))
	for i := 0; i < len(rows); i += 6 {
		y[i] = ys[i]
	}
	for _, tt := range []struct {
		name    string
		gamma   float64
		lambdaI float64
		lap     anngraph.LaplacianConfig
	}{
		{"normalized, p = 2", 0.1, 1, anngraph.LaplacianConfig{Normalized: true, Degree: 2}},
		{"D - W, binary", 0.05, 0.3, anngraph.LaplacianConfig{Weights: anngraph.Binary}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lap := g50cGraph(t, rows, 6, tt.lap)
			params := Params{Algorithm: LapSVM, Lambda: 1e-3, LambdaI: tt.lambdaI, Tolerances: newton.Tolerances{Epsilon: 1e-12}}
			km, err := kernel.NewMap(rows, tt.gamma)
			if err != nil {
				t.Fatal(err)
			}
			if km.Rank != len(rows) {
				t.Fatalf("map of rank %d over %d rows: the kernel matrix lost directions", km.Rank, len(rows))
			}
			phi, err := km.ApplyAll(context.Background(), rows)
			if err != nil {
				t.Fatal(err)
			}
			sol, err := newton.Solve(context.Background(), newton.Problem{X: linalg.NewVectorRows(phi, km.Rank, 1), Y: y, Laplacian: lap}, params.Binary(), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := denseKernelLapSVM(t, rows, y, tt.gamma, lap, params.Lambda, params.LambdaI)
			for i := range rows {
				got := phi[i].DotDense(sol.W) + sol.W[km.Rank]
				if math.Abs(got-want[i]) > 1e-6*(1+math.Abs(want[i])) {
					t.Fatalf("row %d: f = %v over the map, %v for the kernel machine", i, got, want[i])
				}
			}
		})
	}
}

// denseKernelLapSVM returns the outputs f = Kα + b of kernel LapSVM with
// squared hinge, by Newton's method on the active set with dense solves of
// the stationarity conditions (sufficient, as K multiplies the gradient in
// α): λα + (1/l) I_A (f − y) + (λ_I/s) M f = 0 and
// λb + (1/l) 1_Aᵀ(f − y) + (λ_I/s) 1ᵀ M f = 0.
func denseKernelLapSVM(t *testing.T, rows []vector.Vector, y []float64, gamma float64, lap newton.Laplacian, lambda, lambdaI float64) []float64 {
	t.Helper()
	n := len(rows)
	k := mat.NewDense(n+1, n+1, nil) // [K 1]: f = k·(α, b)
	for i := range n {
		for j := range n {
			k.Set(i, j, math.Exp(-gamma*vector.SquaredDistance(rows[i], rows[j])))
		}
		k.Set(i, n, 1)
	}
	m := mat.NewDense(n, n, nil)
	e, b, col := make([]float64, n), make([]float64, lap.FactorRows()), make([]float64, n)
	for j := range n {
		clear(e)
		e[j] = 1
		lap.MulFactor(b, e)
		lap.MulFactorTrans(col, b)
		m.SetCol(j, col)
	}
	var l float64
	for _, v := range y {
		if v != 0 {
			l++
		}
	}
	kn := k.Slice(0, n, 0, n+1)
	var mk mat.Dense // M [K 1], n × (n+1)
	mk.Mul(m, kn)
	active := make([]bool, n)
	f := make([]float64, n)
	for range 100 {
		a := mat.NewDense(n+1, n+1, nil)
		rhs := make([]float64, n+1)
		for i := range n + 1 {
			a.Set(i, i, lambda)
		}
		// Rows 0..n-1: the α conditions; row n: the b condition, which is
		// the sum of the α rows' loss and graph parts.
		for i := range n {
			for j := range n + 1 {
				v := lambdaI / lap.Scale() * mk.At(i, j)
				if active[i] {
					v += k.At(i, j) / l
				}
				a.Set(i, j, a.At(i, j)+v)
				a.Set(n, j, a.At(n, j)+v)
			}
			if active[i] {
				rhs[i] += y[i] / l
				rhs[n] += y[i] / l
			}
		}
		var x mat.VecDense
		if err := x.SolveVec(a, mat.NewVecDense(n+1, rhs)); err != nil {
			t.Fatal(err)
		}
		changed := false
		for i := range n {
			f[i] = mat.Dot(k.RowView(i), &x)
			now := y[i] != 0 && y[i]*f[i] < 1
			changed = changed || now != active[i]
			active[i] = now
		}
		if !changed {
			return f
		}
	}
	t.Fatal("dense kernel LapSVM: the active set did not settle in 100 Newton steps")
	return nil
}
