package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddOuter holds AddOuter (assembly where the CPU has it) and its
// portable four-row loop against a plain sum of outer products, for widths
// that exercise the four-column blocks and every tail, and for row counts
// with and without a remainder of single rows. Only the upper triangle is
// written.
func TestAddOuter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for d1 := 1; d1 <= 70; d1++ {
		for _, n := range []int{1, 4, 7, 12} {
			rows := make([]float64, n*d1)
			for i := range rows {
				rows[i] = r.NormFloat64()
			}
			start := make([]float64, d1*d1)
			for i := range start {
				start[i] = r.NormFloat64()
			}
			alpha := -0.75
			want := append([]float64(nil), start...)
			for k := range n {
				a := rows[k*d1 : (k+1)*d1]
				for i := range d1 {
					for j := i; j < d1; j++ {
						want[i*d1+j] += alpha * a[i] * a[j]
					}
				}
			}
			got := append([]float64(nil), start...)
			AddOuter(got, d1, alpha, rows)
			checkOuter(t, "addOuter", d1, n, got, want)
			if n%4 == 0 {
				got = append(got[:0], start...)
				for k := 0; k < n; k += 4 {
					addOuter4Go(got, d1, alpha, rows[k*d1:(k+4)*d1])
				}
				checkOuter(t, "addOuter4Go", d1, n, got, want)
			}
		}
	}
}

func checkOuter(t *testing.T, name string, d1, n int, got, want []float64) {
	t.Helper()
	for p := range want {
		if math.Abs(got[p]-want[p]) > 1e-12*(1+math.Abs(want[p]))*float64(n) {
			t.Fatalf("%s, d1 = %d, %d rows: h[%d] = %v, want %v", name, d1, n, p, got[p], want[p])
		}
	}
}

// BenchmarkAddOuter adds 64 rows of 65 values (a dense window of 64
// columns and the bias) to a Gram matrix, as a Newton step's updates do.
func BenchmarkAddOuter(b *testing.B) {
	const d1, n = 65, 64
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]float64, n*d1)
	for i := range rows {
		rows[i] = r.NormFloat64()
	}
	h := make([]float64, d1*d1)
	for b.Loop() {
		AddOuter(h, d1, 1, rows)
	}
}
