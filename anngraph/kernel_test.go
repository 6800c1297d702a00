package anngraph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFloat32Kernels holds the float32 kernels (assembly where the CPU has
// it) against float64 sums of the same float32 values, for lengths that
// exercise every block size and tail.
func TestFloat32Kernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 100; n++ {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64()*3)
		}
		var dot, l2, scale float64
		for i := range a {
			dot += float64(a[i]) * float64(b[i])
			d := float64(a[i]) - float64(b[i])
			l2 += d * d
			scale += math.Abs(float64(a[i]) * float64(b[i]))
		}
		tol := 1e-5 * (1 + scale)
		if got := float64(dotF32(a, b)); math.Abs(got-dot) > tol {
			t.Fatalf("n = %d: dotF32 %v, want %v", n, got, dot)
		}
		if got := float64(dotF32Go(a, b)); math.Abs(got-dot) > tol {
			t.Fatalf("n = %d: dotF32Go %v, want %v", n, got, dot)
		}
		if got := float64(l2F32(a, b)); math.Abs(got-l2) > 1e-5*(1+l2) {
			t.Fatalf("n = %d: l2F32 %v, want %v", n, got, l2)
		}
		if got := float64(l2F32Go(a, b)); math.Abs(got-l2) > 1e-5*(1+l2) {
			t.Fatalf("n = %d: l2F32Go %v, want %v", n, got, l2)
		}
	}
}

func BenchmarkDotF32(b *testing.B) {
	x, y := make([]float32, 784), make([]float32, 784)
	for i := range x {
		x[i], y[i] = float32(i), float32(784-i)
	}
	var s float32
	for b.Loop() {
		s += l2F32(x, y)
	}
	_ = s
}
