package linalg

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// VectorMinLen is the vector length below which reduce runs on one
// goroutine: a pass over a shorter vector costs less than starting one.
const VectorMinLen = 1 << 15

// Dot returns a·b.
func Dot(a, b []float64) float64 { return floats.Dot(a, b) }

// Axpy sets dst += a·x.
func Axpy(dst []float64, a float64, x []float64) { floats.AddScaled(dst, a, x) }

// AddScaled sets z += a·w over z's length, in a plain loop.
func AddScaled(z []float64, a float64, w []float64) {
	w = w[:len(z)]
	for k := range z {
		z[k] += a * w[k]
	}
}

// Grow returns (*buf)[:n], reallocating when the buffer is too short.
func Grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// Norm returns ‖a‖.
func Norm(a []float64) float64 { return math.Sqrt(Dot(a, a)) }

// Logistic returns 1 / (1 + e^-x), computed without overflow on either
// side.
func Logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
