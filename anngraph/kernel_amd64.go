package anngraph

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels (AVX2 with FMA) over the portable
// ones; it is read-only after init.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotF32AVX2 and l2F32AVX2 take rows whose length n is a multiple of 8.
//
//go:noescape
func dotF32AVX2(a, b *float32, n int) float32

//go:noescape
func l2F32AVX2(a, b *float32, n int) float32

// prefetchRows asks for every cache line of each row ids[i] of the slab at
// base (rows of strideBytes bytes, a multiple of 64) without waiting for
// them. Whole rows, not their first lines only: a hardware prefetcher
// follows one stream, not a batch's worth, so the rest of each row would
// still miss one line after another (anngraph/README.md, Distances, has
// the figures).
//
//go:noescape
func prefetchRows(base *float32, ids *int32, n int, strideBytes int)

// dotF32 returns the product of two padded rows of the same length.
func dotF32(a, b []float32) float32 {
	if useAVX2 && len(a) > 0 {
		b = b[:len(a)]
		return dotF32AVX2(&a[0], &b[0], len(a)&^7) + dotF32Go(a[len(a)&^7:], b[len(a)&^7:])
	}
	return dotF32Go(a, b)
}

// l2F32 returns the squared Euclidean distance of two padded rows of the
// same length.
func l2F32(a, b []float32) float32 {
	if useAVX2 && len(a) > 0 {
		b = b[:len(a)]
		return l2F32AVX2(&a[0], &b[0], len(a)&^7) + l2F32Go(a[len(a)&^7:], b[len(a)&^7:])
	}
	return l2F32Go(a, b)
}

// prefetch starts loading the rows ids of slab, of stride values each
// (a multiple of f32Align).
func prefetch(slab []float32, stride int, ids []int32) {
	if len(ids) == 0 || len(slab) == 0 {
		return
	}
	prefetchRows(&slab[0], &ids[0], len(ids), 4*stride)
}

//go:noescape
func prefetchLines(p *int32, lines int)

// prefetchInt32 starts loading the cache lines of s (at most four).
func prefetchInt32(s []int32) {
	if len(s) > 0 {
		prefetchLines(&s[0], min((4*len(s)+63)/64, 4))
	}
}
