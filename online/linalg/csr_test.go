package linalg

import (
	"math"
	"testing"

	"streamer/online/internal/onlinetest"
	"streamer/vector"
)

// TestCSRMatchesVectorRows checks the compact matrices' products against
// the feature-space ones on rows whose values are float32 numbers, which
// CSR stores exactly (it rounds others to them).
func TestCSRMatchesVectorRows(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(9, 300, 500, 20, 0)
	rows = append(rows, vector.Dense([]float64{1, 2, 3}))
	for _, r := range rows {
		for k, x := range r.Values {
			r.Values[k] = float64(float32(x))
		}
	}
	v := NewVectorRows(rows, 600, 2)
	for _, c := range []interface {
		Matrix
		ColumnMap
	}{NewCSR(rows, 600, 2), NewDense(rows, 600, 2)} {
		matchesVectorRows(t, rows, v, c)
	}
}

// matchesVectorRows checks c's products over its columns against v's over
// the feature space.
func matchesVectorRows(t *testing.T, rows []vector.Vector, v *VectorRows, c Matrix) {
	t.Helper()
	space := NewColumnSpace(c)
	w := make([]float64, 601)
	for j := range w {
		w[j] = math.Cos(float64(j))
	}
	wc := space.Compact(w)
	subset := []int{3, 1, 299, 300, 7}
	for _, sel := range [][]int{nil, subset} {
		n := len(rows)
		if sel != nil {
			n = len(sel)
		}
		a, b := make([]float64, n), make([]float64, n)
		v.MulVec(a, sel, w)
		c.MulVec(b, sel, wc[:c.Cols()])
		if onlinetest.RelDiff(b, a) > 1e-14 {
			t.Fatalf("%T: MulVec differs", c)
		}
		z := make([]float64, n)
		for k := range z {
			z[k] = math.Sin(float64(k))
		}
		ta := make([]float64, 600)
		tb := make([]float64, c.Cols())
		v.MulTransVec(ta, sel, z)
		c.MulTransVec(tb, sel, z)
		tb = space.Expand(append(tb, 0))[:600]
		if onlinetest.RelDiff(tb, ta) > 1e-14 {
			t.Fatalf("%T: MulTransVec differs", c)
		}
	}
}
