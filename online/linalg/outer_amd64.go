package linalg

import "golang.org/x/sys/cpu"

// useFMA selects the assembly kernel (AVX2 with FMA) of AddOuter over the
// portable loop; it is read-only after init.
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// outer4AVX2 adds alpha·Σ_k a_k a_kᵀ over the four consecutive rows a_k of
// d1 values at a to the upper triangle of the d1 × d1 row-major h.
//
//go:noescape
func outer4AVX2(h *float64, d1 int, a *float64, alpha float64)

// addOuter4 adds alpha·Σ_k a_k a_kᵀ over the four rows of rows (4·d1
// values) to the upper triangle of h.
func addOuter4(h []float64, d1 int, alpha float64, rows []float64) {
	if useFMA && d1 > 0 {
		_, _ = h[d1*d1-1], rows[4*d1-1]
		outer4AVX2(&h[0], d1, &rows[0], alpha)
		return
	}
	addOuter4Go(h, d1, alpha, rows)
}
