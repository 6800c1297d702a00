package newton

// Laplacian is the graph term of manifold regularization as the solver needs
// it: the matrix M = L_g^p over the window's rows, given through a factor B
// with BᵀB = M, so that CGLS can run on the stacked matrix of docs/MATH.md and
// XᵀMX is never formed. The sliding-window graph of package anngraph
// implements it; so does the exact kNN graph that `fit` builds for files.
type Laplacian interface {
	// Vertices returns the number of rows n the operator acts on, in the
	// row order of the problem's data matrix.
	Vertices() int
	// FactorRows returns the number of rows of B.
	FactorRows() int
	// MulFactor sets dst = B·o, with len(o) = Vertices() and
	// len(dst) = FactorRows().
	MulFactor(dst, o []float64)
	// MulFactorTrans sets dst = Bᵀ·v, with len(v) = FactorRows() and
	// len(dst) = Vertices().
	MulFactorTrans(dst, v []float64)
	// Scale returns s of docs/MATH.md: Σ_ij W_ij for D - W, n for the
	// normalized Laplacian. The objective's graph term is λ_I/2 · oᵀMo / s.
	Scale() float64
}
