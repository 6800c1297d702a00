//go:build !amd64

package linalg

// addOuter4 adds alpha·Σ_k a_k a_kᵀ over the four rows of rows (4·d1
// values) to the upper triangle of h.
func addOuter4(h []float64, d1 int, alpha float64, rows []float64) {
	addOuter4Go(h, d1, alpha, rows)
}
