package bench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"streamer/vector"
)

// exportMagic starts a file of points written by WritePoints; the byte after
// it is 'd' (dense) or 's' (sparse).
const exportMagic = "ANNPTS1"

// WritePoints writes xs, all dense or all sparse, for the hnswlib reference
// (scripts/hnswlib/fill.cc): the header "ANNPTS1" and 'd' or 's', then per
// point its little-endian int32 length n and, dense, n float32 values;
// sparse, n int32 indices then n float32 values.
func WritePoints(w io.Writer, xs []vector.Vector) error {
	kind := byte('s')
	if len(xs) > 0 && xs[0].IsDense() {
		kind = 'd'
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(exportMagic)
	bw.WriteByte(kind)
	var b [4]byte
	put := func(u uint32) {
		binary.LittleEndian.PutUint32(b[:], u)
		bw.Write(b[:])
	}
	for i, x := range xs {
		if x.IsDense() != (kind == 'd') {
			return fmt.Errorf("point %d: dense and sparse points mixed", i)
		}
		put(uint32(len(x.Values)))
		for _, j := range x.Indices {
			put(uint32(j))
		}
		for _, v := range x.Values {
			put(math.Float32bits(float32(v)))
		}
	}
	return bw.Flush()
}

func exportPoints(path string, xs []vector.Vector) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export points: %w", err)
	}
	if err := WritePoints(f, xs); err != nil {
		f.Close()
		return fmt.Errorf("export points to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export points to %s: %w", path, err)
	}
	return nil
}
