package anngraph

// Float32 kernels for dense windows. Dense vectors are copied into one
// float32 slab (space.slab), each row padded with zeros to a multiple of
// f32Align values, so that a kernel runs over whole blocks of 8 lanes and
// every row starts on a cache line of its own.

// f32Align is the row stride's multiple, in values: 16 float32s are one
// 64-byte cache line.
const f32Align = 16

// dotF32Go is the portable product of two rows of the same padded length.
func dotF32Go(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// l2F32Go is the portable squared Euclidean distance of two rows of the
// same padded length.
func l2F32Go(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return s0 + s1 + s2 + s3
}
