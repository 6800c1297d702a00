package online

import "gonum.org/v1/gonum/mat"

// srGramMaxCols is the widest dense window (columns plus the bias) whose
// SR regressions are solved through one shared Gram matrix: every response
// has the same costs, so λI + X̃ᵀCX̃ is formed and factored once (a BLAS-3
// pass, n·d² flops) and all responses are back-substituted, instead of one
// CGLS run per response (each some d/10 to d/5 passes over X at BLAS-2
// speed; 85 iterations per response on 5,000 × 784 clustered rows).
const srGramMaxCols = 2049

// srGramBlock is the number of rows packed per rank-k update.
const srGramBlock = 256

// ridgeShared solves every response's ridge regression at once on a dense
// window through the Cholesky factor of λI + X̃ᵀCX̃ (X̃ with the bias
// column, C = 1 on labeled rows and γ² on unlabeled ones, targets y and
// y/γ). X̃ᵀCX̃ is prev's updated by the rows that changed when prev kept
// it (srGram). It returns false when the window is not dense, too wide,
// or the factorization fails; the caller then runs CGLS per response.
func (p *srProblem) ridgeShared(ys [][]float64, prev *srGram) ([]Solution, bool) {
	x, ok := p.data.X.(*Dense)
	if !ok || x.Cols()+1 > srGramMaxCols || len(ys) == 0 {
		return nil, false
	}
	d := x.Cols() + 1
	scale := p.rowScales()
	p.gram = p.gramFor(x, scale, prev)
	gram := mat.NewSymDense(d, nil)
	gram.CopySym(p.gram.g)
	for j := range d {
		gram.SetSym(j, j, gram.At(j, j)+p.params.Lambda)
	}
	var chol mat.Cholesky
	if !chol.Factorize(gram) {
		return nil, false
	}
	rhs := p.rightHandSides(x, ys, scale)
	var a mat.Dense
	if err := chol.SolveTo(&a, rhs); err != nil {
		return nil, false
	}
	space := newColumnSpace(x)
	sols := make([]Solution, len(ys))
	for k, y := range ys {
		w, b := mat.Col(nil, k, &a), mat.Col(nil, k, rhs)
		sols[k] = Solution{W: space.expand(w)}
		sols[k].Stats = Stats{Objective: ridgeOptimum(y, scale, w, b), NewtonSteps: 1, Runs: 1}
	}
	return sols, true
}

// ridgeOptimum returns the ridge objective ½(α‖w‖² + Σ_i (s_i x̃_i·w - y_i)²)
// (the rows of scale s_i = 0 left out) at its minimizer w, where
// (X̃ᵀCX̃ + αI) w = b = X̃ᵀ√C y: there it equals ½(Σ y_i² - wᵀb), which costs
// no pass over the rows.
func ridgeOptimum(y, scale, w, b []float64) float64 {
	var yy float64
	for i, v := range y {
		if scale[i] != 0 {
			yy += v * v
		}
	}
	return (yy - dot(w, b)) / 2
}

// rowScales returns √C per row: 1 labeled, γ unlabeled.
func (p *srProblem) rowScales() []float64 {
	s := make([]float64, len(p.class))
	for i, c := range p.class {
		s[i] = 1
		if c < 0 {
			s[i] = p.params.SRGamma
		}
	}
	return s
}

// rightHandSides returns X̃ᵀ√C·Y (the unlabeled targets y/γ scaled by
// √C = γ are y again; rows of scale 0 add nothing), accumulated over row
// blocks on up to x's workers.
func (p *srProblem) rightHandSides(x *Dense, ys [][]float64, scale []float64) *mat.Dense {
	n, d, r := x.Rows(), x.Cols()+1, len(ys)
	blocks := (n + srGramBlock - 1) / srGramBlock
	workers := min(x.workers, blocks)
	rhss := make([]*mat.Dense, max(workers, 1))
	parallelRange(blocks, workers, func(w, lo, hi int) {
		b := mat.NewDense(d, r, nil)
		a := mat.NewDense(srGramBlock, d, nil)
		t := mat.NewDense(srGramBlock, r, nil)
		var part mat.Dense
		for blk := lo; blk < hi; blk++ {
			first, last := blk*srGramBlock, min(n, (blk+1)*srGramBlock)
			for i := first; i < last; i++ {
				row := a.RawRowView(i - first)
				floatsScaleTo(row[:d-1], scale[i], x.Row(i))
				row[d-1] = scale[i]
				trow := t.RawRowView(i - first)
				for k, y := range ys {
					trow[k] = y[i]
					if scale[i] == 0 {
						trow[k] = 0
					}
				}
			}
			rows := last - first
			part.Reset()
			part.Mul(a.Slice(0, rows, 0, d).T(), t.Slice(0, rows, 0, r))
			b.Add(b, &part)
		}
		rhss[w] = b
	})
	for w := 1; w < len(rhss); w++ {
		if rhss[w] != nil {
			rhss[0].Add(rhss[0], rhss[w])
		}
	}
	return rhss[0]
}
