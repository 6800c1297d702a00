package newton

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"streamer/vector"
)

// factorLaplacian is a reference Laplacian held as a dense factor B.
type factorLaplacian struct {
	b     *mat.Dense
	scale float64
}

func (f *factorLaplacian) Vertices() int { _, c := f.b.Dims(); return c }

func (f *factorLaplacian) FactorRows() int { r, _ := f.b.Dims(); return r }

func (f *factorLaplacian) Scale() float64 { return f.scale }

func (f *factorLaplacian) MulFactor(dst, o []float64) {
	mat.NewVecDense(len(dst), dst).MulVec(f.b, mat.NewVecDense(len(o), o))
}

func (f *factorLaplacian) MulFactorTrans(dst, v []float64) {
	mat.NewVecDense(len(dst), dst).MulVec(f.b.T(), mat.NewVecDense(len(v), v))
}

// matrix returns M = BᵀB.
func (f *factorLaplacian) matrix() *mat.Dense {
	var m mat.Dense
	m.Mul(f.b.T(), f.b)
	return &m
}

// exactKNNLaplacian builds the symmetrized exact kNN graph of rows with heat
// weights (σ the mean kNN distance) and returns L = D - W (p = 1) as its
// edge–vertex factor, or the normalized form.
func exactKNNLaplacian(rows []vector.Vector, k int, normalized bool) *factorLaplacian {
	return knnLaplacian(rows, k, normalized, false, false)
}

// knnLaplacian is exactKNNLaplacian with a choice of cosine distance for the
// neighbour search and binary weights.
func knnLaplacian(rows []vector.Vector, k int, normalized, cosine, binary bool) *factorLaplacian {
	n := len(rows)
	w := mat.NewDense(n, n, nil)
	dist := make([][]float64, n)
	var sum float64
	var count int
	nbrs := make([][]int, n)
	for i := range rows {
		dist[i] = make([]float64, n)
		for j := range rows {
			dist[i][j] = math.Sqrt(vector.SquaredDistance(rows[i], rows[j]))
			if cosine {
				dist[i][j] = 1 - vector.Dot(rows[i], rows[j])/(rows[i].Norm()*rows[j].Norm())
			}
		}
		order := make([]int, 0, n-1)
		for j := range rows {
			if j != i {
				order = append(order, j)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case dist[i][a] < dist[i][b]:
				return -1
			case dist[i][a] > dist[i][b]:
				return 1
			}
			return 0
		})
		nbrs[i] = order[:k]
		for _, j := range nbrs[i] {
			sum += dist[i][j]
			count++
		}
	}
	sigma := sum / float64(count)
	for i := range nbrs {
		for _, j := range nbrs[i] {
			v := math.Exp(-dist[i][j] * dist[i][j] / (2 * sigma * sigma))
			if binary {
				v = 1
			}
			w.Set(i, j, v)
			w.Set(j, i, v)
		}
	}
	return laplacianFromWeights(w, normalized)
}

func laplacianFromWeights(w *mat.Dense, normalized bool) *factorLaplacian {
	n, _ := w.Dims()
	deg := make([]float64, n)
	var total float64
	var edges [][3]float64
	for i := range n {
		for j := range n {
			deg[i] += w.At(i, j)
			total += w.At(i, j)
			if j > i && w.At(i, j) > 0 {
				edges = append(edges, [3]float64{float64(i), float64(j), w.At(i, j)})
			}
		}
	}
	b := mat.NewDense(max(len(edges), 1), n, nil)
	for e, ed := range edges {
		i, j, v := int(ed[0]), int(ed[1]), math.Sqrt(ed[2])
		si, sj := 1.0, 1.0
		if normalized {
			si, sj = 1/math.Sqrt(deg[i]), 1/math.Sqrt(deg[j])
		}
		b.Set(e, i, v*si)
		b.Set(e, j, -v*sj)
	}
	scale := total
	if normalized {
		scale = float64(n)
	}
	return &factorLaplacian{b: b, scale: scale}
}
