package kernel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"streamer/online/linalg"
	"streamer/vector"
)

// Map is the Nyström feature map of the Gaussian kernel
// k(x, z) = exp(-γ‖x - z‖²) over m landmarks z_1…z_m (MATH.md "Kernel
// feature maps"): φ(x)·φ(z) = k(x)ᵀ K_mm⁻¹ k(z), for k(x) = [k(x, z_i)]_i,
// computed by a pivoted Cholesky factorization of K_mm that drops the
// landmarks the others already span (factor). A linear model over φ is a
// kernel machine; with every row a landmark the map is exact on them. The
// map is part of a model: scoring, restore and replay apply the same one.
type Map struct {
	Landmarks []vector.Vector
	Gamma     float64
	// Projection is m × r, row-major: φ(x)_j = Σ_i Projection[i·r+j]·k(x, z_i).
	Projection []float64
	// Rank is r, the dimension of φ.
	Rank int

	landmarkSq []float64      // ‖z_i‖²
	index      *landmarkIndex // sparse landmarks inverted, nil for dense ones
	// upper says that Projection is r × r and zero left of its diagonal,
	// as factor makes it, so that Apply skips the zeros.
	upper bool
}

// Config says whether and how a learner maps its rows. The zero
// value is no map.
type Config struct {
	// Kind is "" or "none" for no map, "rbf" for the Gaussian kernel.
	Kind string
	// Landmarks is m; 0 means 1000.
	Landmarks int
	// Gamma is γ; 0 means 1 / the median squared distance between
	// landmarks.
	Gamma float64
}

// Enabled reports whether the configuration asks for a map.
func (c Config) Enabled() bool { return c.Kind == "rbf" }

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Kind != "" && c.Kind != "none" && c.Kind != "rbf":
		return fmt.Errorf("kernel %q: want none or rbf", c.Kind)
	case c.Landmarks < 0:
		return fmt.Errorf("landmarks must be >= 0, got %d", c.Landmarks)
	case c.Gamma < 0 || math.IsNaN(c.Gamma) || math.IsInf(c.Gamma, 0):
		return fmt.Errorf("gamma must be finite and >= 0, got %v", c.Gamma)
	}
	return nil
}

// LandmarkCount returns m, the number of landmarks (default 1000).
func (c Config) LandmarkCount() int {
	if c.Landmarks == 0 {
		return 1000
	}
	return c.Landmarks
}

// SampleLandmarks returns min(m, len(rows)) rows drawn without replacement
// by a generator seeded with seed, in their original order: the same rows
// for the same window and seed.
func SampleLandmarks(rows []vector.Vector, m int, seed uint64) []vector.Vector {
	if m >= len(rows) {
		return slices.Clone(rows)
	}
	r := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	idx := r.Perm(len(rows))[:m]
	slices.Sort(idx)
	out := make([]vector.Vector, m)
	for k, i := range idx {
		out[k] = rows[i]
	}
	return out
}

// NewMap fits the Nyström map of the landmarks; gamma 0 takes the
// median heuristic.
func NewMap(landmarks []vector.Vector, gamma float64) (*Map, error) {
	m := len(landmarks)
	if m == 0 {
		return nil, errors.New("kernel map: no landmarks")
	}
	km := &Map{Landmarks: landmarks, Gamma: gamma}
	km.landmarkSq = squaredNorms(landmarks)
	km.index = newLandmarkIndex(landmarks)
	dist := km.landmarkDistances()
	if km.Gamma == 0 {
		km.Gamma = medianGamma(dist, m)
	}
	k := make([]float64, m*m)
	for i := range m {
		for j := i; j < m; j++ {
			k[i*m+j] = math.Exp(-km.Gamma * dist[i*m+j])
		}
	}
	if err := km.factor(k); err != nil {
		return nil, fmt.Errorf("kernel map: %w", err)
	}
	return km, nil
}

// pivotTolerance ends the pivoted Cholesky factorization of the landmarks'
// kernel: a landmark whose squared distance, in the kernel's feature
// space, from the span of the landmarks pivoted before it is at most this
// (the kernel's diagonal is 1) adds nothing the map can use stably.
const pivotTolerance = 1e-10

// factor sets the projection from K_mm, given by its upper triangle in k
// (m × m, row-major; overwritten): PᵀK_mmP = UᵀU by Cholesky with
// pivoting, stopped at rank r, and φ(x) = U_r⁻ᵀ k_r(x) over the r pivoted
// landmarks, the others dropped. Then φ(x)·φ(z) = k_r(x)ᵀ K_rr⁻¹ k_r(z):
// the Nyström approximation over those landmarks, which with a full rank
// is φ = Λ^{-1/2}Uᵀk(x) of K_mm's eigendecomposition up to a rotation, and
// costs m³/3 flops against some 10m³ for the eigendecomposition.
func (km *Map) factor(k []float64) error {
	m := len(km.Landmarks)
	piv := make([]int, m)
	a := blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: k}
	_, r, _ := lapack64.Pstrf(a, piv, pivotTolerance, make([]float64, 2*m))
	if r == 0 {
		return errors.New("the landmarks' kernel matrix has rank 0")
	}
	u := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: r, Stride: m, Data: k}
	if !lapack64.Trtri(u) {
		return errors.New("the landmarks' Cholesky factor is singular")
	}
	// φ_c(x) = Σ_i (U⁻¹)_ic k(x, z_piv[i]): the projection's row i is row i
	// of U⁻¹, zero left of the diagonal.
	km.Rank = r
	km.Projection = make([]float64, r*r)
	for i := range r {
		copy(km.Projection[i*r+i:(i+1)*r], k[i*m+i:i*m+r])
	}
	landmarks, sq := make([]vector.Vector, r), make([]float64, r)
	for i, p := range piv[:r] {
		landmarks[i], sq[i] = km.Landmarks[p], km.landmarkSq[p]
	}
	km.Landmarks, km.landmarkSq = landmarks, sq
	km.index = newLandmarkIndex(landmarks)
	km.upper = true
	return nil
}

// isUpper reports whether the projection is square and zero left of its
// diagonal.
func (km *Map) isUpper() bool {
	r := km.Rank
	if len(km.Landmarks) != r {
		return false
	}
	for i := range r {
		for _, v := range km.Projection[i*r : i*r+i] {
			if v != 0 {
				return false
			}
		}
	}
	return true
}

// RestoreMap returns the map of a snapshot's parts, checked: a
// landmark per projection row, a finite positive γ, a rank within the
// landmarks, and dense landmarks of one length.
func RestoreMap(landmarks []vector.Vector, gamma float64, projection []float64, rank int) (*Map, error) {
	km := &Map{Landmarks: landmarks, Gamma: gamma, Projection: projection, Rank: rank}
	m := len(km.Landmarks)
	switch {
	case m == 0:
		return nil, errors.New("kernel map without landmarks")
	case km.Rank < 1 || km.Rank > m:
		return nil, fmt.Errorf("kernel map of rank %d over %d landmarks", km.Rank, m)
	case len(km.Projection) != m*km.Rank:
		return nil, fmt.Errorf("kernel map projection has %d values, want %d", len(km.Projection), m*km.Rank)
	case !(km.Gamma > 0) || math.IsInf(km.Gamma, 0):
		return nil, fmt.Errorf("kernel map gamma %v", km.Gamma)
	}
	// Dense landmarks share one length. A snapshot writes a mostly-zero
	// dense one as (index, value) pairs, so it comes back sparse: its
	// products with any row are the same (dotClipped).
	width := -1
	for i, z := range landmarks {
		if !z.IsDense() {
			continue
		}
		if width >= 0 && len(z.Values) != width {
			return nil, fmt.Errorf("kernel map landmark %d has %d values, another %d", i, len(z.Values), width)
		}
		width = len(z.Values)
	}
	km.landmarkSq = squaredNorms(landmarks)
	km.index = newLandmarkIndex(landmarks)
	km.upper = km.isUpper()
	return km, nil
}

// dotClipped returns x·z over the dimensions both have: an input of
// another length or kind than the landmarks (which the decoders refuse
// before it gets here) must not crash scoring.
func dotClipped(x, z vector.Vector) float64 {
	switch {
	case x.IsDense() && z.IsDense():
		n := min(len(x.Values), len(z.Values))
		return vector.DenseDot(x.Values[:n], z.Values[:n])
	case x.IsDense():
		return sparseDenseDot(z, x.Values)
	case z.IsDense():
		return sparseDenseDot(x, z.Values)
	}
	return vector.Dot(x, z)
}

// sparseDenseDot returns s·d over the indices of s that d has.
func sparseDenseDot(s vector.Vector, d []float64) float64 {
	var sum float64
	for k, j := range s.Indices {
		if int(j) < len(d) {
			sum += s.Values[k] * d[j]
		}
	}
	return sum
}

func squaredNorms(rows []vector.Vector) []float64 {
	sq := make([]float64, len(rows))
	for i, z := range rows {
		sq[i] = z.SquaredNorm()
	}
	return sq
}

// landmarkDistances returns the m × m squared distances between landmarks.
func (km *Map) landmarkDistances() []float64 {
	m := len(km.Landmarks)
	d := make([]float64, m*m)
	var dots []float64
	for i := range m {
		dots = km.landmarkDots(i, dots)
		for j := i + 1; j < m; j++ {
			v := max(0, km.landmarkSq[i]+km.landmarkSq[j]-2*dots[j])
			d[i*m+j], d[j*m+i] = v, v
		}
	}
	return d
}

// landmarkDots sets dots[j] to z_i·z_j for the landmarks j after i (the
// index gives the others as well) and returns dots (grown when too short).
func (km *Map) landmarkDots(i int, dots []float64) []float64 {
	if km.index != nil {
		return km.products(km.Landmarks[i], dots)
	}
	dots = linalg.Grow(&dots, len(km.Landmarks))
	for j := i + 1; j < len(km.Landmarks); j++ {
		dots[j] = dotClipped(km.Landmarks[i], km.Landmarks[j])
	}
	return dots
}

// products sets dots[i] to x·z_i for each landmark and returns dots (grown
// when too short): through the index for a sparse x over sparse landmarks.
func (km *Map) products(x vector.Vector, dots []float64) []float64 {
	dots = linalg.Grow(&dots, len(km.Landmarks))
	if km.index != nil && !x.IsDense() {
		km.index.products(x, dots)
		return dots
	}
	for i, z := range km.Landmarks {
		dots[i] = dotClipped(x, z)
	}
	return dots
}

// medianGamma returns 1 / the median squared distance between distinct
// landmarks (1 when they all coincide).
func medianGamma(dist []float64, m int) float64 {
	var pairs []float64
	for i := range m {
		for j := i + 1; j < m; j++ {
			pairs = append(pairs, dist[i*m+j])
		}
	}
	if len(pairs) == 0 {
		return 1
	}
	slices.Sort(pairs)
	med := pairs[len(pairs)/2]
	if med <= 0 {
		return 1
	}
	return 1 / med
}

// Dim returns the dimension of φ.
func (km *Map) Dim() int { return km.Rank }

// Apply returns φ(x), a dense vector of Dim values. It is safe for
// concurrent use.
func (km *Map) Apply(x vector.Vector) vector.Vector {
	r := km.Rank
	out := make([]float64, r)
	for i, k := range km.kernels(x, nil) {
		lo := 0
		if km.upper {
			lo = i
		}
		linalg.Axpy(out[lo:], k, km.Projection[i*r+lo:(i+1)*r])
	}
	return vector.Dense(out)
}

// InputDim returns the input dimension the landmarks span: a dense one's
// length, a sparse one's largest index plus one. (A model with a map has
// the map's dimension, Dim, not the input's.)
func (km *Map) InputDim() int {
	d := 0
	for _, z := range km.Landmarks {
		if z.IsDense() {
			d = max(d, len(z.Values))
		} else if n := len(z.Indices); n > 0 {
			d = max(d, int(z.Indices[n-1])+1)
		}
	}
	return d
}

// Kernels returns k(x, z_i) for each landmark z_i, in the order of
// Landmarks: the inputs that folded weights (Fold) multiply.
func (km *Map) Kernels(x vector.Vector) []float64 { return km.kernels(x, nil) }

// kernels sets k[i] to k(x, z_i) for each landmark and returns k (grown
// when too short).
func (km *Map) kernels(x vector.Vector, k []float64) []float64 {
	k = km.products(x, k)
	xsq := x.SquaredNorm()
	for i, dot := range k {
		k[i] = km.kernelOf(xsq, i, dot)
	}
	return k
}

// kernelOf returns k(x, z_i), given ‖x‖² and x·z_i.
func (km *Map) kernelOf(xsq float64, i int, dot float64) float64 {
	return math.Exp(-km.Gamma * max(0, xsq+km.landmarkSq[i]-2*dot))
}

// Folded holds weight vectors over φ carried over to the landmarks' kernel
// values (Fold), packed landmark-major: the P weights of landmark i side
// by side at W[i·P:(i+1)·P], and each vector's bias in Bias.
type Folded struct {
	P    int
	W    []float64
	Bias []float64
}

// FoldedOutputs sets z to the outputs of the folded weights pw (Fold) for
// x: the biases, then each landmark's kernel value times its weights, in
// the order a model's packed weights add a dense row. A dense row's kernel
// values are added as they are computed rather than kept (8 KB a row for
// 1,000 landmarks); a sparse row's products come from the index, into a
// buffer the map's scorers share.
func (km *Map) FoldedOutputs(pw *Folded, x vector.Vector, z []float64) {
	p := pw.P
	copy(z[:p], pw.Bias)
	xsq := x.SquaredNorm()
	if km.index == nil || x.IsDense() {
		for i, lm := range km.Landmarks {
			linalg.AddScaled(z[:p], km.kernelOf(xsq, i, dotClipped(x, lm)), pw.W[i*p:i*p+p])
		}
		return
	}
	buf, _ := km.index.scratch.Get().(*[]float64)
	if buf == nil {
		buf = new([]float64)
	}
	*buf = km.products(x, *buf)
	for i, dot := range *buf {
		linalg.AddScaled(z[:p], km.kernelOf(xsq, i, dot), pw.W[i*p:i*p+p])
	}
	km.index.scratch.Put(buf)
}

// Fold returns weights over φ (Dim+1 each, bias last) carried over to the
// landmarks' kernel values, packed landmark-major: u_k = P·w_k, so that
// w_k·φ(x) + b_k = Σ_i k(x, z_i)·u_k[i] + b_k. Scoring through them costs
// m products an output instead of the m·r of forming φ(x), a million
// for 1,000 landmarks. It returns nil for weights of another length.
func (km *Map) Fold(weights [][]float64) *Folded {
	m, r, p := len(km.Landmarks), km.Rank, len(weights)
	pw := &Folded{P: p, W: make([]float64, m*p), Bias: make([]float64, p)}
	for k, w := range weights {
		if len(w) != r+1 {
			return nil
		}
		for i := range m {
			pw.W[i*p+k] = linalg.Dot(km.Projection[i*r:(i+1)*r], w[:r])
		}
		pw.Bias[k] = w[r]
	}
	return pw
}

// ApplyAll maps rows, on up to GOMAXPROCS goroutines. It stops, with
// ctx's error, when ctx is done: each goroutine checks between blocks of
// applyBlock rows.
func (km *Map) ApplyAll(ctx context.Context, rows []vector.Vector) ([]vector.Vector, error) {
	out := make([]vector.Vector, len(rows))
	workers := 1
	if len(rows)*len(km.Landmarks) > 1<<16 {
		workers = runtime.GOMAXPROCS(0)
	}
	linalg.ParallelRange(len(rows), workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if (i-lo)%applyBlock == 0 && ctx.Err() != nil {
				return
			}
			out[i] = km.Apply(rows[i])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// applyBlock is the number of rows ApplyAll maps between two looks at its
// context.
const applyBlock = 64
