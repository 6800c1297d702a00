package bench

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"streamer/vector"
)

// TestWritePoints reads back the layout scripts/hnswlib/fill.cc expects.
func TestWritePoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []vector.Vector
		kind byte
		want []uint32 // after the header
	}{
		{"dense", []vector.Vector{vector.Dense([]float64{1, -2}), vector.Dense([]float64{0.5, 3})}, 'd',
			[]uint32{2, f32bits(1), f32bits(-2), 2, f32bits(0.5), f32bits(3)}},
		{"sparse", []vector.Vector{vector.Sparse([]int32{3, 70000}, []float64{1, 2}), vector.Sparse(nil, nil)}, 's',
			[]uint32{2, 3, 70000, f32bits(1), f32bits(2), 0}},
	} {
		var buf bytes.Buffer
		if err := WritePoints(&buf, tc.xs); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if string(b[:7]) != exportMagic || b[7] != tc.kind {
			t.Fatalf("%s: header %q", tc.name, b[:8])
		}
		b = b[8:]
		if len(b) != 4*len(tc.want) {
			t.Fatalf("%s: %d bytes after the header, want %d", tc.name, len(b), 4*len(tc.want))
		}
		for i, w := range tc.want {
			if got := binary.LittleEndian.Uint32(b[4*i:]); got != w {
				t.Fatalf("%s: word %d = %#x, want %#x", tc.name, i, got, w)
			}
		}
	}
	mixed := []vector.Vector{vector.Dense([]float64{1}), vector.Sparse([]int32{0}, []float64{1})}
	if err := WritePoints(&bytes.Buffer{}, mixed); err == nil {
		t.Fatal("dense and sparse points mixed: no error")
	}
}

func f32bits(x float64) uint32 { return math.Float32bits(float32(x)) }
