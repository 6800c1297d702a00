package binomial

import "math"

// Wilson returns the lower and upper ends of Wilson's score interval at z
// standard deviations for successes in n trials; (0, 1) without trials.
func Wilson(successes, n int, z float64) (lower, upper float64) {
	if n <= 0 {
		return 0, 1
	}
	p, nf, z2 := float64(successes)/float64(n), float64(n), z*z
	centre := p + z2/(2*nf)
	spread := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return (centre - spread) / (1 + z2/nf), (centre + spread) / (1 + z2/nf)
}
