package anngraph

import (
	"fmt"
	"math"
	"sync"
)

// WeightKind is how an edge of the kNN graph is weighted.
type WeightKind int

const (
	// Heat is the heat kernel exp(-‖x_i - x_j‖²/(2σ²)), with the
	// Euclidean distance whatever the Metric.
	Heat WeightKind = iota
	// CosineSimilarity is the cosine of the two vectors, clipped at 0 so
	// that no weight is negative (a zero vector has cosine 0).
	CosineSimilarity
	// Binary weighs every edge 1.
	Binary
)

func (k WeightKind) String() string {
	switch k {
	case Heat:
		return "heat"
	case CosineSimilarity:
		return "cosine"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("WeightKind(%d)", int(k))
}

// ParseWeightKind returns the weight kind named by s: "heat", "cosine" or
// "binary".
func ParseWeightKind(s string) (WeightKind, error) {
	for _, k := range []WeightKind{Heat, CosineSimilarity, Binary} {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown edge weights %q (want heat, cosine or binary)", s)
}

// LaplacianConfig describes the graph Laplacian of a View. The zero value is
// L = D - W with heat-kernel weights and σ the mean kNN distance.
type LaplacianConfig struct {
	// Normalized selects I - D^{-1/2} W D^{-1/2} instead of D - W. A vertex
	// without edges has D^{-1/2} = 0, so its row and column of the
	// normalized Laplacian are 0 (Chung's convention).
	Normalized bool
	// Degree is the power p of M = L^p; 0 means 1.
	Degree int
	// Weights is the edge weight; the zero value is Heat.
	Weights WeightKind
	// Sigma is σ of the heat kernel; 0 means the mean, over every listed
	// kNN entry, of the Euclidean distance.
	Sigma float64
}

// Validate reports the first field of c that is out of range, as a
// *ConfigError.
func (c LaplacianConfig) Validate() error {
	switch {
	case c.Degree < 0:
		return &ConfigError{"Laplacian.Degree", c.Degree, "must not be negative"}
	case c.Weights != Heat && c.Weights != CosineSimilarity && c.Weights != Binary:
		return &ConfigError{"Laplacian.Weights", int(c.Weights), "must be Heat, CosineSimilarity or Binary"}
	case c.Sigma < 0 || math.IsNaN(c.Sigma) || math.IsInf(c.Sigma, 0):
		return &ConfigError{"Laplacian.Sigma", c.Sigma, "must be finite and not negative"}
	}
	return nil
}

// Laplacian is M = L^p for the graph Laplacian L of a View's symmetrized
// kNN graph (i ~ j when either lists the other), as an operator over the
// View's rows. It gives the solver a factor B with BᵀB = M: for odd p,
// B = B_e·L^{(p-1)/2}, where B_e has one row per undirected edge e = {i, j},
// i < j, holding sqrt(W_ij) at column i and -sqrt(W_ij) at column j (each
// scaled by D^{-1/2} for the normalized form), so that B_eᵀB_e = L; for
// even p, B = L^{p/2}. It never forms a matrix. It implements the Laplacian
// interface of package online and is safe for concurrent use; dst and the
// operand of a product must not overlap.
type Laplacian struct {
	n      int
	degree int
	// Edge e joins ea[e] < eb[e]; row e of B_e is ca[e] at column ea[e]
	// and -cb[e] at column eb[e].
	ea, eb []int32
	ca, cb []float64
	w      []float64 // W of each edge
	rank   []int32   // the smaller of the positions at which the ends list each other
	scale  float64
	sigma  float64
	bufs   sync.Pool // *scratch of two vectors of length n
}

type scratch struct{ a, b []float64 }

// Laplacian builds the Laplacian of the view's kNN graph.
func (v *View) Laplacian(cfg LaplacianConfig) (*Laplacian, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := cfg.Degree
	if p == 0 {
		p = 1
	}
	l := &Laplacian{n: v.Len(), degree: p}
	l.collectEdges(v)
	l.sigma = cfg.Sigma
	if cfg.Weights == Heat && l.sigma == 0 {
		l.sigma = v.meanEuclidean()
	}
	l.w = make([]float64, len(l.ea))
	for e := range l.ea {
		l.w[e] = v.weight(int(l.ea[e]), int(l.eb[e]), l.ca[e], cfg.Weights, l.sigma)
	}
	l.factor(cfg.Normalized)
	n := l.n
	l.bufs.New = func() any { return &scratch{a: make([]float64, n), b: make([]float64, n)} }
	return l, nil
}

// collectEdges lists each undirected edge once, with its distance in ca for
// now: the smaller of the two listed distances when both ends list the
// other (they are equal up to rounding); and its rank, the smaller of the
// positions at which the ends list each other.
func (l *Laplacian) collectEdges(v *View) {
	for i := range v.Len() {
		for r, nb := range v.Neighbors(i) {
			j := nb.Row
			switch {
			case j > i:
				d, rank := nb.Distance, r
				if dj, rj, ok := v.listed(j, i); ok {
					d, rank = min(d, dj), min(rank, rj)
				}
				l.add(i, j, d, rank)
			case j < i:
				if _, _, ok := v.listed(j, i); !ok {
					l.add(j, i, nb.Distance, r)
				}
			}
		}
	}
}

func (l *Laplacian) add(i, j int, d float64, rank int) {
	l.ea = append(l.ea, int32(i))
	l.eb = append(l.eb, int32(j))
	l.ca = append(l.ca, d)
	l.rank = append(l.rank, int32(rank))
}

// listed returns the distance at which row i lists row j, and its
// position in i's list (0 for the nearest).
func (v *View) listed(i, j int) (float64, int, bool) {
	for r, nb := range v.Neighbors(i) {
		if nb.Row == j {
			return nb.Distance, r, true
		}
	}
	return 0, 0, false
}

// euclidean returns ‖x_i - x_j‖ from the distance d at which one lists the
// other. For Cosine, ‖x - y‖² = ‖x‖² + ‖y‖² - 2‖x‖‖y‖cos.
func (v *View) euclidean(i, j int, d float64) float64 {
	if v.metric == Euclidean {
		return d
	}
	cos := 1 - d
	return math.Sqrt(max(v.sq[i]+v.sq[j]-2*math.Sqrt(v.sq[i]*v.sq[j])*cos, 0))
}

// cosine returns cos(x_i, x_j) from the distance d at which one lists the
// other.
func (v *View) cosine(i, j int, d float64) float64 {
	if v.metric == Cosine {
		return 1 - d
	}
	if v.sq[i] == 0 || v.sq[j] == 0 {
		return 0
	}
	return (v.sq[i] + v.sq[j] - d*d) / (2 * math.Sqrt(v.sq[i]*v.sq[j]))
}

// meanEuclidean returns the mean Euclidean distance over every kNN entry.
func (v *View) meanEuclidean() float64 {
	var sum float64
	var count int
	for i := range v.Len() {
		for _, nb := range v.Neighbors(i) {
			sum += v.euclidean(i, nb.Row, nb.Distance)
			count++
		}
	}
	if count == 0 {
		return 0
	}
	return sum / float64(count)
}

func (v *View) weight(i, j int, d float64, kind WeightKind, sigma float64) float64 {
	switch kind {
	case CosineSimilarity:
		return min(max(v.cosine(i, j, d), 0), 1)
	case Binary:
		return 1
	}
	e := v.euclidean(i, j, d)
	if sigma == 0 {
		// Every listed distance is 0: the kernel's limit.
		if e == 0 {
			return 1
		}
		return 0
	}
	return math.Exp(-e * e / (2 * sigma * sigma))
}

// factor sets the entries of B_e and the scale s.
func (l *Laplacian) factor(normalized bool) {
	l.cb = make([]float64, len(l.ea))
	var total float64
	for _, w := range l.w {
		total += 2 * w
	}
	var inv []float64 // D^{-1/2}, 0 where D is 0
	if normalized {
		deg := make([]float64, l.n)
		for e, w := range l.w {
			deg[l.ea[e]] += w
			deg[l.eb[e]] += w
		}
		inv = deg
		for i, d := range deg {
			if d > 0 {
				inv[i] = 1 / math.Sqrt(d)
			}
		}
	}
	for e, w := range l.w {
		s := math.Sqrt(w)
		l.ca[e], l.cb[e] = s, s
		if normalized {
			l.ca[e] *= inv[l.ea[e]]
			l.cb[e] *= inv[l.eb[e]]
		}
	}
	switch {
	case normalized:
		l.scale = float64(l.n)
	default:
		l.scale = total
	}
	if l.scale == 0 {
		l.scale = 1 // no edge weight: the graph term is 0 either way
	}
}

// Vertices returns the number of rows n.
func (l *Laplacian) Vertices() int { return l.n }

// Edges returns the number of undirected edges.
func (l *Laplacian) Edges() int { return len(l.ea) }

// Degree returns the power p.
func (l *Laplacian) Degree() int { return l.degree }

// Sigma returns σ of the heat kernel (0 for other weights).
func (l *Laplacian) Sigma() float64 { return l.sigma }

// Edge returns edge e's ends, i < j, and weight W_ij.
func (l *Laplacian) Edge(e int) (i, j int, w float64) {
	return int(l.ea[e]), int(l.eb[e]), l.w[e]
}

// Rank returns edge e's rank: 0 when one end is the other's nearest
// neighbour, and in general the smaller of the positions at which the ends
// list each other. The edges of rank below p form the symmetrized p-NN
// graph (i ~ j when either is among the other's p nearest).
func (l *Laplacian) Rank(e int) int { return int(l.rank[e]) }

// Scale returns s: Σ_ij W_ij (both directions) for D - W, n for the
// normalized form; 1 when that is 0, as the graph term is 0 anyway.
func (l *Laplacian) Scale() float64 { return l.scale }

// FactorRows returns the number of rows of B: the edges for odd p, n for
// even p.
func (l *Laplacian) FactorRows() int {
	if l.degree%2 == 0 {
		return l.n
	}
	return len(l.ea)
}

// Mul sets dst = M·o = L^p·o.
func (l *Laplacian) Mul(dst, o []float64) {
	l.checkLen("Mul", dst, l.n, o, l.n)
	s := l.get()
	defer l.bufs.Put(s)
	l.pow(dst, o, l.degree, s.a)
}

// MulFactor sets dst = B·o.
func (l *Laplacian) MulFactor(dst, o []float64) {
	l.checkLen("MulFactor", dst, l.FactorRows(), o, l.n)
	s := l.get()
	defer l.bufs.Put(s)
	r := l.degree / 2
	if l.degree%2 == 0 {
		l.pow(dst, o, r, s.a)
		return
	}
	t := o
	if r > 0 {
		l.pow(s.b, o, r, s.a)
		t = s.b
	}
	l.mulEdges(dst, t)
}

// MulFactorTrans sets dst = Bᵀ·v.
func (l *Laplacian) MulFactorTrans(dst, v []float64) {
	l.checkLen("MulFactorTrans", dst, l.n, v, l.FactorRows())
	s := l.get()
	defer l.bufs.Put(s)
	r := l.degree / 2
	if l.degree%2 == 0 {
		l.pow(dst, v, r, s.a)
		return
	}
	if r == 0 {
		l.mulEdgesTrans(dst, v)
		return
	}
	l.mulEdgesTrans(s.b, v)
	l.pow(dst, s.b, r, s.a)
}

func (l *Laplacian) get() *scratch { return l.bufs.Get().(*scratch) }

func (l *Laplacian) checkLen(op string, dst []float64, nd int, src []float64, ns int) {
	if len(dst) != nd || len(src) != ns {
		panic(fmt.Sprintf("anngraph: Laplacian.%s: len(dst) = %d, len(src) = %d, want %d and %d", op, len(dst), len(src), nd, ns))
	}
}

// pow sets dst = L^r·src, r ≥ 0, with tmp as scratch. The products
// alternate between dst and tmp so that the last lands in dst.
func (l *Laplacian) pow(dst, src []float64, r int, tmp []float64) {
	if r == 0 {
		copy(dst, src)
		return
	}
	cur := src
	for step := 1; step <= r; step++ {
		next := dst
		if (r-step)%2 == 1 {
			next = tmp
		}
		l.mulL(next, cur)
		cur = next
	}
}

// mulL sets dst = L·o = B_eᵀ(B_e·o), edge by edge.
func (l *Laplacian) mulL(dst, o []float64) {
	clear(dst)
	for e, a := range l.ea {
		b := l.eb[e]
		t := l.ca[e]*o[a] - l.cb[e]*o[b]
		dst[a] += l.ca[e] * t
		dst[b] -= l.cb[e] * t
	}
}

// mulEdges sets dst = B_e·o.
func (l *Laplacian) mulEdges(dst, o []float64) {
	for e, a := range l.ea {
		dst[e] = l.ca[e]*o[a] - l.cb[e]*o[l.eb[e]]
	}
}

// mulEdgesTrans sets dst = B_eᵀ·v.
func (l *Laplacian) mulEdgesTrans(dst, v []float64) {
	clear(dst)
	for e, a := range l.ea {
		dst[a] += l.ca[e] * v[e]
		dst[l.eb[e]] -= l.cb[e] * v[e]
	}
}
