package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randomSparse(r *rand.Rand, dim, nnz int) (Vector, []float64) {
	dense := make([]float64, dim)
	for range nnz {
		dense[r.IntN(dim)] = r.NormFloat64()
	}
	var idx []int32
	var val []float64
	for j, x := range dense {
		if x != 0 {
			idx = append(idx, int32(j))
			val = append(val, x)
		}
	}
	return Sparse(idx, val), dense
}

func TestDotAgreesAcrossRepresentations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		dim := 1 + r.IntN(40)
		a, ad := randomSparse(r, dim, r.IntN(dim+1))
		b, bd := randomSparse(r, dim, r.IntN(dim+1))
		var want float64
		for j := range ad {
			want += ad[j] * bd[j]
		}
		for name, got := range map[string]float64{
			"sparse·sparse": Dot(a, b),
			"sparse·dense":  Dot(a, Dense(bd)),
			"dense·sparse":  Dot(Dense(ad), b),
			"dense·dense":   Dot(Dense(ad), Dense(bd)),
			"DotDense":      a.DotDense(bd),
		} {
			if math.Abs(got-want) > 1e-12 {
				t.Fatalf("trial %d %s = %v, want %v", trial, name, got, want)
			}
		}
		var wantDist float64
		for j := range ad {
			wantDist += (ad[j] - bd[j]) * (ad[j] - bd[j])
		}
		if got := SquaredDistance(a, b); math.Abs(got-wantDist) > 1e-9 {
			t.Fatalf("trial %d SquaredDistance = %v, want %v", trial, got, wantDist)
		}
		if got := SquaredDistance(Dense(ad), Dense(bd)); math.Abs(got-wantDist) > 1e-9 {
			t.Fatalf("trial %d dense SquaredDistance = %v, want %v", trial, got, wantDist)
		}
	}
}

func TestAddScaledTo(t *testing.T) {
	v := Sparse([]int32{1, 3}, []float64{2, -1})
	dst := []float64{1, 1, 1, 1}
	v.AddScaledTo(dst, 0.5)
	want := []float64{1, 2, 1, 0.5}
	for j := range want {
		if dst[j] != want[j] {
			t.Fatalf("dst = %v, want %v", dst, want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		v    Vector
		dim  int
		ok   bool
	}{
		{"good sparse", Sparse([]int32{0, 5}, []float64{1, 2}), 6, true},
		{"empty sparse", Sparse(nil, nil), 6, true},
		{"unsorted", Sparse([]int32{5, 0}, []float64{1, 2}), 6, false},
		{"duplicate", Sparse([]int32{2, 2}, []float64{1, 2}), 6, false},
		{"out of range", Sparse([]int32{6}, []float64{1}), 6, false},
		{"negative", Sparse([]int32{-1}, []float64{1}), 6, false},
		{"length mismatch", Sparse([]int32{1}, []float64{1, 2}), 6, false},
		{"nan", Sparse([]int32{1}, []float64{math.NaN()}), 6, false},
		{"inf dense", Dense([]float64{math.Inf(1), 0}), 2, false},
		{"dense wrong length", Dense([]float64{1, 2, 3}), 2, false},
		{"dense any length", Dense([]float64{1, 2, 3}), 0, true},
	}
	for _, tt := range tests {
		err := tt.v.Validate(tt.dim)
		if (err == nil) != tt.ok {
			t.Errorf("%s: Validate = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestNormalize(t *testing.T) {
	v := Dense([]float64{3, 4})
	v.Normalize()
	if math.Abs(v.Norm()-1) > 1e-15 {
		t.Fatalf("norm after Normalize = %v", v.Norm())
	}
	z := Sparse(nil, nil)
	z.Normalize() // must not divide by zero
}

func BenchmarkSparseDot(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	x, _ := randomSparse(r, 1<<18, 80)
	y, _ := randomSparse(r, 1<<18, 80)
	b.ResetTimer()
	for b.Loop() {
		Dot(x, y)
	}
}

func BenchmarkDenseDot784(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 784)
	y := make([]float64, 784)
	for j := range x {
		x[j], y[j] = r.NormFloat64(), r.NormFloat64()
	}
	b.ResetTimer()
	for b.Loop() {
		DenseDot(x, y)
	}
}
