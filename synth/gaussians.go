package synth

import (
	"math/rand/v2"

	"streamer/vector"
)

// g50cMeanNorm puts the two class means ±μ at ‖μ‖ = Φ⁻¹(0.95), so that the
// Bayes error of two unit-covariance Gaussians is 5%.
const g50cMeanNorm = 1.6448536269514722

// G50C returns the g50c problem of Chapelle and Zien as the thesis uses it:
// 550 points in 50 dimensions drawn from two unit-covariance Gaussians whose
// means are placed so that the Bayes error is 5%. Labels are ±1 with equal
// probability.
func G50C(seed uint64) ([]vector.Vector, []float64) {
	return Gaussians(seed, 550, 50, g50cMeanNorm)
}

// Gaussians draws n points in dim dimensions from two unit-covariance
// Gaussians with means ±meanNorm·e₁, the class (±1) chosen with probability ½.
func Gaussians(seed uint64, n, dim int, meanNorm float64) ([]vector.Vector, []float64) {
	r := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	xs := make([]vector.Vector, n)
	ys := make([]float64, n)
	for i := range n {
		y := 1.0
		if r.IntN(2) == 0 {
			y = -1
		}
		x := make([]float64, dim)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		x[0] += y * meanNorm
		xs[i], ys[i] = vector.Dense(x), y
	}
	return xs, ys
}

// ClusterConfig describes clustered dense data.
type ClusterConfig struct {
	Points   int     // number of points
	Dim      int     // dimensions
	Clusters int     // number of Gaussian clusters; 0 means 50
	Spread   float64 // within-cluster standard deviation relative to the centre spread; 0 means 0.35
	Seed     uint64
}

// Clusters draws points from isotropic Gaussian clusters whose centres are
// themselves standard normal, like image embeddings grouped by class. The
// second result is each point's cluster.
func Clusters(cfg ClusterConfig) ([]vector.Vector, []int) {
	k := cfg.Clusters
	if k <= 0 {
		k = 50
	}
	spread := cfg.Spread
	if spread <= 0 {
		spread = 0.35
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0xbb67ae8584caa73b))
	centres := make([][]float64, k)
	for c := range centres {
		centres[c] = make([]float64, cfg.Dim)
		for j := range centres[c] {
			centres[c][j] = r.NormFloat64()
		}
	}
	xs := make([]vector.Vector, cfg.Points)
	cs := make([]int, cfg.Points)
	for i := range xs {
		c := r.IntN(k)
		x := make([]float64, cfg.Dim)
		for j := range x {
			x[j] = centres[c][j] + spread*r.NormFloat64()
		}
		xs[i], cs[i] = vector.Dense(x), c
	}
	return xs, cs
}
