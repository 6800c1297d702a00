package linalg

import (
	"maps"
	"math"
	"slices"
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

// TestCSRLayout: each row's entries are ordered by compact column, the
// columns by falling frequency of their features, features equally
// frequent by feature, and every row keeps its values.
func TestCSRLayout(t *testing.T) {
	rows, _ := onlinetest.SparseProblem(5, 400, 300, 25, 0)
	m := NewCSR(rows, 300, 2)
	count := map[int32]int{}
	for _, r := range rows {
		for _, j := range r.Indices {
			count[j]++
		}
	}
	if len(m.columns) != len(count) {
		t.Fatalf("%d columns for %d features present", len(m.columns), len(count))
	}
	for c := 1; c < len(m.columns); c++ {
		a, b := m.columns[c-1], m.columns[c]
		if count[a] < count[b] || count[a] == count[b] && a > b {
			t.Fatalf("column %d is feature %d (%d rows), column %d feature %d (%d rows)", c-1, a, count[a], c, b, count[b])
		}
	}
	for i, r := range rows {
		idx, val := m.indices[m.indptr[i]:m.indptr[i+1]], m.values[m.indptr[i]:m.indptr[i+1]]
		if !slices.IsSorted(idx) {
			t.Fatalf("row %d: columns %v not in order", i, idx)
		}
		want := map[int32]float32{}
		for k, j := range r.Indices {
			want[j] = float32(r.Values[k])
		}
		got := map[int32]float32{}
		for k, c := range idx {
			got[m.columns[c]] = val[k]
		}
		if !maps.Equal(got, want) {
			t.Fatalf("row %d: %v, want %v", i, got, want)
		}
	}
}

// BenchmarkNewCSR builds the matrix of a 20,000-row text window, each row
// 80 features of 2^18: what every solve of a text stream starts with.
func BenchmarkNewCSR(b *testing.B) {
	rows, _ := onlinetest.SparseProblem(1, 20000, 1<<18, 80, 0)
	for b.Loop() {
		NewCSR(rows, 1<<18, 0)
	}
}
