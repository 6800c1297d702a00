package linalg

import "gonum.org/v1/gonum/floats"

// AddOuter adds alpha·Σ_r a_r a_rᵀ to the upper triangle of the d1 × d1
// row-major h, a_r the rows of rows; four rows at a time, so that each row
// of h is loaded and stored once per four.
func AddOuter(h []float64, d1 int, alpha float64, rows []float64) {
	n := len(rows) / d1
	r := 0
	for ; r+4 <= n; r += 4 {
		addOuter4(h, d1, alpha, rows[r*d1:(r+4)*d1])
	}
	for ; r < n; r++ {
		a := rows[r*d1 : (r+1)*d1]
		for i := range d1 {
			floats.AddScaled(h[i*d1+i:(i+1)*d1], alpha*a[i], a[i:])
		}
	}
}

// addOuter4Go is AddOuter of four rows, without assembly.
func addOuter4Go(h []float64, d1 int, alpha float64, rows []float64) {
	a0, a1, a2, a3 := rows[:d1], rows[d1:2*d1], rows[2*d1:3*d1], rows[3*d1:4*d1]
	for i := range d1 {
		c0, c1, c2, c3 := alpha*a0[i], alpha*a1[i], alpha*a2[i], alpha*a3[i]
		hi := h[i*d1+i : (i+1)*d1]
		b0, b1, b2, b3 := a0[i:], a1[i:], a2[i:], a3[i:]
		b0, b1, b2, b3 = b0[:len(hi)], b1[:len(hi)], b2[:len(hi)], b3[:len(hi)]
		for j := range hi {
			hi[j] += c0*b0[j] + c1*b1[j] + c2*b2[j] + c3*b3[j]
		}
	}
}
