package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"streamer/online/kernel"
	"streamer/online/model"
	"streamer/vector"
)

// The binary form:
//
//	magic "STRMSNAP" | format version u16 | header length u32 | header JSON
//	| weight vectors u32 | per vector: encoding u8, length u32, then either
//	  length float64 (dense) or count u32 and count × (index u32, float64)
//	  (sparse) | [format 2: the kernel map's landmarks, then its projection
//	  as one dense vector, each encoded as a weight vector]
//	| CRC-32C of all the preceding bytes, u32
//
// Integers are little-endian. The header holds everything but the weights.
// A model without a kernel map is written in format 1, so that older
// builds read it.

// Magic starts every snapshot.
const Magic = "STRMSNAP"

// FormatVersion is the newest version of the binary form: Encode writes it
// for a model with a kernel map, and format 1 otherwise.
const FormatVersion = 2

// Errors a caller must tell apart: the running model stays when a snapshot
// is refused with one of them.
var (
	ErrChecksum       = errors.New("snapshot checksum mismatch")
	ErrUnknownVersion = errors.New("unknown snapshot format version")
	ErrNotSnapshot    = errors.New("not a snapshot")
)

const (
	encDense  = 0
	encSparse = 1
	// maxHeaderBytes bounds the JSON header a decoder accepts.
	maxHeaderBytes = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the JSON part: the snapshot without its weight vectors.
type header struct {
	Snapshot
	Classes      []string      `json:"classes"`
	Dim          int           `json:"dim"`
	Temperatures []float64     `json:"temperatures,omitempty"`
	Calibration  []model.Platt `json:"calibration,omitempty"`
	// Centroids are an SR model's class centroids in its embedding.
	Centroids [][]float64 `json:"centroids,omitempty"`
	Vectors   int         `json:"vectors"`
	// Kernel describes the model's kernel map, whose vectors follow the
	// weights.
	Kernel *kernelHeader `json:"kernel,omitempty"`
}

type kernelHeader struct {
	Gamma     float64 `json:"gamma"`
	Landmarks int     `json:"landmarks"`
	Rank      int     `json:"rank"`
}

// Encode returns the binary form of s.
func Encode(s *Snapshot) ([]byte, error) {
	h := header{Snapshot: *s, Classes: s.Model.Classes, Dim: s.Model.Dim, Calibration: s.Model.Calibration, Centroids: s.Model.Centroids, Vectors: len(s.Model.Problems)}
	for _, p := range s.Model.Problems {
		h.Temperatures = append(h.Temperatures, p.Temperature)
	}
	version := uint16(1)
	if km := s.Model.Map; km != nil {
		h.Kernel = &kernelHeader{Gamma: km.Gamma, Landmarks: len(km.Landmarks), Rank: km.Rank}
		version = 2
	}
	meta, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot header: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(Magic)
	le := binary.LittleEndian
	b.Write(le.AppendUint16(nil, version))
	b.Write(le.AppendUint32(nil, uint32(len(meta))))
	b.Write(meta)
	b.Write(le.AppendUint32(nil, uint32(len(s.Model.Problems))))
	for k, p := range s.Model.Problems {
		if len(p.W) != s.Model.Dim+1 {
			return nil, fmt.Errorf("encode snapshot: problem %d has %d weights, want %d", k, len(p.W), s.Model.Dim+1)
		}
		b.Write(appendWeights(nil, p.W))
	}
	if km := s.Model.Map; km != nil {
		for _, z := range km.Landmarks {
			b.Write(appendVector(nil, z))
		}
		b.Write(appendWeights(nil, km.Projection))
	}
	b.Write(le.AppendUint32(nil, crc32.Checksum(b.Bytes(), castagnoli)))
	return b.Bytes(), nil
}

// appendWeights writes w densely or as (index, value) pairs, whichever is
// smaller: a text model touches a fraction of its hashed features.
func appendWeights(dst []byte, w []float64) []byte {
	le := binary.LittleEndian
	nnz := 0
	for _, x := range w {
		if x != 0 {
			nnz++
		}
	}
	if 12*nnz+4 < 8*len(w) {
		dst = append(dst, encSparse)
		dst = le.AppendUint32(dst, uint32(len(w)))
		dst = le.AppendUint32(dst, uint32(nnz))
		for j, x := range w {
			if x != 0 {
				dst = le.AppendUint32(dst, uint32(j))
				dst = le.AppendUint64(dst, math.Float64bits(x))
			}
		}
		return dst
	}
	dst = append(dst, encDense)
	dst = le.AppendUint32(dst, uint32(len(w)))
	for _, x := range w {
		dst = le.AppendUint64(dst, math.Float64bits(x))
	}
	return dst
}

// Decode parses the binary form. A wrong checksum is ErrChecksum, an
// unknown format version ErrUnknownVersion, anything else malformed an
// error wrapping ErrNotSnapshot.
func Decode(data []byte) (*Snapshot, error) {
	if err := Verify(data); err != nil {
		return nil, err
	}
	r := reader{buf: data[len(Magic)+2 : len(data)-4]}
	h, err := r.header()
	if err != nil {
		return nil, err
	}
	s := h.Snapshot
	s.Model = model.Model{Classes: h.Classes, Dim: h.Dim, Calibration: h.Calibration, Centroids: h.Centroids}
	if err := r.problems(&s.Model, h); err != nil {
		return nil, err
	}
	if h.Kernel != nil {
		km, err := r.kernelMap(h.Kernel)
		if err != nil {
			return nil, err
		}
		if km.Dim() != h.Dim {
			return nil, fmt.Errorf("%w: kernel map of dimension %d for a model of %d", ErrNotSnapshot, km.Dim(), h.Dim)
		}
		s.Model.Map = km
	}
	if len(r.buf) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrNotSnapshot, len(r.buf))
	}
	return &s, nil
}

// reader consumes the body with bounds checks before every allocation.
type reader struct{ buf []byte }

func (r *reader) uint32() (uint32, error) {
	if len(r.buf) < 4 {
		return 0, fmt.Errorf("%w: truncated", ErrNotSnapshot)
	}
	v := binary.LittleEndian.Uint32(r.buf)
	r.buf = r.buf[4:]
	return v, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.buf) {
		return nil, fmt.Errorf("%w: truncated", ErrNotSnapshot)
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b, nil
}

func (r *reader) header() (*header, error) {
	n, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if n > maxHeaderBytes {
		return nil, fmt.Errorf("%w: header of %d bytes", ErrNotSnapshot, n)
	}
	meta, err := r.bytes(int(n))
	if err != nil {
		return nil, err
	}
	var h header
	if err := json.Unmarshal(meta, &h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrNotSnapshot, err)
	}
	if h.Dim < 0 || h.Dim >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: dimension %d", ErrNotSnapshot, h.Dim)
	}
	if err := h.checkCentroids(); err != nil {
		return nil, err
	}
	if err := h.checkReview(); err != nil {
		return nil, err
	}
	if err := h.Progress.check(); err != nil {
		return nil, err
	}
	return &h, nil
}

func (r *reader) problems(m *model.Model, h *header) error {
	n, err := r.uint32()
	if err != nil {
		return err
	}
	if int(n) != h.Vectors || (len(h.Temperatures) != 0 && len(h.Temperatures) != int(n)) {
		return fmt.Errorf("%w: %d weight vectors, header says %d", ErrNotSnapshot, n, h.Vectors)
	}
	for k := range int(n) {
		w, err := r.weights(h.Dim + 1)
		if err != nil {
			return fmt.Errorf("weight vector %d: %w", k, err)
		}
		sol := model.Solution{W: w}
		if len(h.Temperatures) > 0 {
			sol.Temperature = h.Temperatures[k]
		}
		m.Problems = append(m.Problems, sol)
	}
	return nil
}

func (r *reader) weights(want int) ([]float64, error) {
	enc, err := r.bytes(1)
	if err != nil {
		return nil, err
	}
	n, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if int(n) != want {
		return nil, fmt.Errorf("%w: %d weights, want %d", ErrNotSnapshot, n, want)
	}
	switch enc[0] {
	case encDense:
		raw, err := r.bytes(8 * want)
		if err != nil {
			return nil, err
		}
		w := make([]float64, want)
		for j := range w {
			w[j] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*j:]))
		}
		return w, checkFinite(w)
	case encSparse:
		return r.sparseWeights(want)
	}
	return nil, fmt.Errorf("%w: weight encoding %d", ErrNotSnapshot, enc[0])
}

func (r *reader) sparseWeights(want int) ([]float64, error) {
	nnz, err := r.uint32()
	if err != nil {
		return nil, err
	}
	raw, err := r.bytes(12 * int(nnz))
	if err != nil {
		return nil, err
	}
	w := make([]float64, want)
	for k := range int(nnz) {
		j := binary.LittleEndian.Uint32(raw[12*k:])
		if int(j) >= want {
			return nil, fmt.Errorf("%w: weight index %d out of range", ErrNotSnapshot, j)
		}
		w[j] = math.Float64frombits(binary.LittleEndian.Uint64(raw[12*k+4:]))
	}
	return w, checkFinite(w)
}

func checkFinite(w []float64) error {
	for j, x := range w {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%w: weight %d is %v", ErrNotSnapshot, j, x)
		}
	}
	return nil
}

// Verify checks the magic, format version and checksum of data without
// parsing it.
func Verify(data []byte) error {
	le := binary.LittleEndian
	if len(data) < len(Magic)+2+4 || string(data[:len(Magic)]) != Magic {
		return fmt.Errorf("%w: no %q magic", ErrNotSnapshot, Magic)
	}
	if v := le.Uint16(data[len(Magic):]); v < 1 || v > FormatVersion {
		return fmt.Errorf("%w %d (this build reads %d)", ErrUnknownVersion, v, FormatVersion)
	}
	body, sum := data[:len(data)-4], le.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, sum, got)
	}
	return nil
}

// checkCentroids verifies that an SR model's centroids fit its classes and
// embedding, so that scoring cannot index out of range.
func (h *header) checkCentroids() error {
	if h.Centroids == nil {
		return nil
	}
	if len(h.Centroids) != len(h.Classes) {
		return fmt.Errorf("%w: %d centroids for %d classes", ErrNotSnapshot, len(h.Centroids), len(h.Classes))
	}
	for c, mu := range h.Centroids {
		if mu != nil && len(mu) != h.Vectors {
			return fmt.Errorf("%w: centroid %d has %d coordinates, want %d", ErrNotSnapshot, c, len(mu), h.Vectors)
		}
		for _, v := range mu {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: centroid %d is not finite", ErrNotSnapshot, c)
			}
		}
	}
	return nil
}

// appendVector writes a landmark: a dense vector as dense weights, a sparse
// one as (index, value) pairs in a space one past its last index.
func appendVector(dst []byte, v vector.Vector) []byte {
	if v.IsDense() {
		return appendWeights(dst, v.Values)
	}
	le := binary.LittleEndian
	n := 0
	if len(v.Indices) > 0 {
		n = int(v.Indices[len(v.Indices)-1]) + 1
	}
	dst = append(dst, encSparse)
	dst = le.AppendUint32(dst, uint32(n))
	dst = le.AppendUint32(dst, uint32(len(v.Indices)))
	for k, j := range v.Indices {
		dst = le.AppendUint32(dst, uint32(j))
		dst = le.AppendUint64(dst, math.Float64bits(v.Values[k]))
	}
	return dst
}

// vector reads a landmark written by appendVector.
func (r *reader) vector() (vector.Vector, error) {
	enc, err := r.bytes(1)
	if err != nil {
		return vector.Vector{}, err
	}
	n, err := r.uint32()
	if err != nil {
		return vector.Vector{}, err
	}
	if n > math.MaxInt32 {
		return vector.Vector{}, fmt.Errorf("%w: vector of %d dimensions", ErrNotSnapshot, n)
	}
	switch enc[0] {
	case encDense:
		raw, err := r.bytes(8 * int(n))
		if err != nil {
			return vector.Vector{}, err
		}
		w := make([]float64, n)
		for j := range w {
			w[j] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*j:]))
		}
		return vector.Dense(w), checkFinite(w)
	case encSparse:
		nnz, err := r.uint32()
		if err != nil {
			return vector.Vector{}, err
		}
		raw, err := r.bytes(12 * int(nnz))
		if err != nil {
			return vector.Vector{}, err
		}
		idx := make([]int32, nnz)
		val := make([]float64, nnz)
		for k := range idx {
			idx[k] = int32(binary.LittleEndian.Uint32(raw[12*k:]))
			val[k] = math.Float64frombits(binary.LittleEndian.Uint64(raw[12*k+4:]))
		}
		v := vector.Sparse(idx, val)
		if err := v.Validate(int(n)); err != nil {
			return vector.Vector{}, fmt.Errorf("%w: landmark: %v", ErrNotSnapshot, err)
		}
		return v, nil
	}
	return vector.Vector{}, fmt.Errorf("%w: vector encoding %d", ErrNotSnapshot, enc[0])
}

// kernelMap reads the kernel map's landmarks and projection.
func (r *reader) kernelMap(h *kernelHeader) (*kernel.Map, error) {
	if h.Landmarks < 1 || h.Rank < 1 || h.Rank > h.Landmarks || h.Landmarks > len(r.buf) {
		return nil, fmt.Errorf("%w: kernel map of %d landmarks, rank %d", ErrNotSnapshot, h.Landmarks, h.Rank)
	}
	landmarks := make([]vector.Vector, h.Landmarks)
	for i := range landmarks {
		v, err := r.vector()
		if err != nil {
			return nil, fmt.Errorf("landmark %d: %w", i, err)
		}
		landmarks[i] = v
	}
	proj, err := r.weights(h.Landmarks * h.Rank)
	if err != nil {
		return nil, fmt.Errorf("kernel projection: %w", err)
	}
	km, err := kernel.RestoreMap(landmarks, h.Gamma, proj, h.Rank)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotSnapshot, err)
	}
	return km, nil
}
