package newton

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"streamer/online/internal/onlinetest"
	"streamer/online/linalg"
)

// TestGraphGramMatchesDense checks X̃ᵀMX̃, formed by blocks of columns
// (two blocks here, the second narrower), against the product of the dense
// matrices, for both Laplacians.
func TestGraphGramMatchesDense(t *testing.T) {
	rows, _ := onlinetest.RandomProblem(3, 90, graphGramBlock+6, 10)
	for _, normalized := range []bool{false, true} {
		lap := exactKNNLaplacian(rows, 5, normalized)
		x := linalg.NewDense(rows, dimOf(rows), 2)
		got := NewGraphGram(x, lap).matrix()
		n, d1 := x.Rows(), x.Cols()+1
		xh := mat.NewDense(n, d1, nil)
		for i := range n {
			copy(xh.RawRowView(i), x.Row(i))
			xh.Set(i, d1-1, 1)
		}
		var xm, want mat.Dense
		xm.Mul(xh.T(), lap.matrix())
		want.Mul(&xm, xh)
		scale := mat.Norm(&want, math.Inf(1))
		for i := range d1 {
			for j := range d1 {
				if diff := math.Abs(got[i*d1+j] - want.At(i, j)); diff > 1e-12*scale {
					t.Fatalf("normalized %v: (%d, %d) = %.15g, want %.15g", normalized, i, j, got[i*d1+j], want.At(i, j))
				}
			}
		}
	}
}

// TestGraphGramOnlyForNarrowDenseWindows checks where the direct solver
// with the graph term applies: dense rows of few columns, however few the
// rows.
func TestGraphGramOnlyForNarrowDenseWindows(t *testing.T) {
	rows, _ := onlinetest.RandomProblem(4, 30, 5, 10)
	lap := exactKNNLaplacian(rows, 3, true)
	if NewGraphGram(linalg.NewDense(rows, 5, 1), lap) == nil {
		t.Error("no graph Gram for a narrow dense window")
	}
	if NewGraphGram(linalg.NewVectorRows(rows, 5, 1), lap) != nil {
		t.Error("a graph Gram for rows that are not packed dense")
	}
	if NewGraphGram(linalg.NewDense(rows, 5, 1), nil) != nil {
		t.Error("a graph Gram without a graph")
	}
	few := linalg.NewDense(rows[:5], 5, 1)
	if NewGraphGram(few, exactKNNLaplacian(rows[:5], 2, true)) == nil {
		t.Error("no graph Gram for a window with fewer rows than columns")
	}
	wide, _ := onlinetest.RandomProblem(4, 30, directGraphMaxCols, 10)
	if NewGraphGram(linalg.NewDense(wide, directGraphMaxCols, 1), exactKNNLaplacian(wide, 3, true)) != nil {
		t.Error("a graph Gram for a window wider than directGraphMaxCols columns and the bias")
	}
}
