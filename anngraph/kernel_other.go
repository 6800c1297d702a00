//go:build !amd64

package anngraph

func dotF32(a, b []float32) float32 { return dotF32Go(a, b) }

func l2F32(a, b []float32) float32 { return l2F32Go(a, b) }

// prefetch does nothing without the assembly kernels.
func prefetch(slab []float32, stride int, ids []int32) {}

// prefetchInt32 does nothing without the assembly kernels.
func prefetchInt32(s []int32) {}
