package train

import (
	"context"
	"math"

	"streamer/online/kernel"
	"streamer/vector"
)

// rbfKernelMap maps rows by the product's Nyström map with every row a
// landmark (exact on them), for the Gaussian kernel exp(-d²/(2σ²)) with σ
// the mean pairwise distance: the thesis's setting for g50c.
func rbfKernelMap(rows []vector.Vector) []vector.Vector {
	km, err := kernel.NewMap(rows, 1/(2*meanDistance(rows)*meanDistance(rows)))
	if err != nil {
		panic(err)
	}
	phi, err := km.ApplyAll(context.Background(), rows)
	if err != nil {
		panic(err)
	}
	return phi
}

func meanDistance(rows []vector.Vector) float64 {
	n := len(rows)
	var sigma float64
	for i := range rows {
		for j := range i {
			sigma += math.Sqrt(vector.SquaredDistance(rows[i], rows[j]))
		}
	}
	return sigma / float64(n*(n-1)/2)
}
