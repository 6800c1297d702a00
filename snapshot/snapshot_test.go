package snapshot

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"streamer/online/kernel"
	"streamer/online/model"
	"streamer/online/review"
	"streamer/vector"
)

func testSnapshot(classes int, dim int, density float64, seed uint64) *Snapshot {
	r := rand.New(rand.NewPCG(seed, 1))
	names := []string{"ham", "spam", "news", "promo"}[:classes]
	m := model.Model{Classes: names, Dim: dim}
	problems := classes
	if classes == 2 {
		problems = 1
	}
	for range problems {
		w := make([]float64, dim+1)
		for j := range w {
			if r.Float64() < density {
				w[j] = r.NormFloat64()
			}
		}
		m.Problems = append(m.Problems, model.Solution{W: w, Temperature: r.Float64()})
		m.Calibration = append(m.Calibration, model.Platt{A: -r.Float64(), B: r.NormFloat64()})
	}
	return &Snapshot{
		Name: "spam-filter", Version: 42, CreatedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC),
		Features: Features{Dim: dim, Signed: true},
		Params:   Params{Algorithm: "tsvm", Lambda: 1e-3, LambdaU: 1},
		Window:   Window{MaxExamples: 1000, K: 10, Laplacian: "normalized", Degree: 1, Weights: "heat"},
		Model:    m,
		Offsets:  []Offset{{Topic: "examples", Partition: 0, WindowStart: 10, Next: 1010}},
		Stats:    Stats{Examples: 1010, Labels: 30, Solves: 7, WindowSize: 1000},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		classes, dim int
		density      float64
	}{{2, 50, 1}, {2, 1 << 14, 0.01}, {3, 100, 0.5}, {4, 10, 0}} {
		s := testSnapshot(tc.classes, tc.dim, tc.density, 1)
		data, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("%+v: round trip changed the snapshot:\n got %+v\nwant %+v", tc, got, s)
		}
	}
}

func TestSparseWeightsAreSmall(t *testing.T) {
	s := testSnapshot(2, 1<<18, 0.01, 2)
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if dense := 8 * (1<<18 + 1); len(data) > dense/4 {
		t.Fatalf("encoded %d bytes, dense weights alone would be %d", len(data), dense)
	}
}

func TestDecodeRefusesBadInput(t *testing.T) {
	data, err := Encode(testSnapshot(3, 20, 1, 3))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0x40
	version := bytes.Clone(data)
	version[len(Magic)] = 9
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"bit flip", flipped, ErrChecksum},
		{"unknown version", version, ErrUnknownVersion},
		{"truncated", data[:len(data)-9], ErrChecksum},
		{"empty", nil, ErrNotSnapshot},
		{"not a snapshot", []byte("hello, world, this is not it"), ErrNotSnapshot},
	}
	for _, tt := range tests {
		if _, err := Decode(tt.data); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.snap")
	s := testSnapshot(2, 30, 1, 4)
	if err := WriteFile(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatal("file round trip changed the snapshot")
	}
	var b strings.Builder
	if err := Summarize(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"spam-filter", "version", "42", "ham, spam", "tsvm", "examples[0]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSummaryOfASpectralModelOverAMap checks that the summary of an SR
// model names its problems as the responses they are, not as classes, and
// describes its kernel map.
func TestSummaryOfASpectralModelOverAMap(t *testing.T) {
	s := srSnapshot()
	km, err := kernel.NewMap([]vector.Vector{vector.Dense([]float64{1, 0}), vector.Dense([]float64{0, 1}), vector.Dense([]float64{1, 1}), vector.Dense([]float64{1, 0})}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	s.Model.Map, s.Model.Dim = km, km.Dim()
	for k := range s.Model.Problems {
		s.Model.Problems[k].W = make([]float64, km.Dim()+1)
	}
	var b strings.Builder
	if err := Summarize(&b, s); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{"kernel      rbf γ=0.5 over 3 landmarks, rank 3", "embedding   3 responses (Spectral Regression), nearest of 3 class centroids", "response 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\nclass ") {
		t.Errorf("summary names a response as a class:\n%s", got)
	}
}

func encoded(t *testing.T, version uint64, dim int) []byte {
	t.Helper()
	s := testSnapshot(2, dim, 1, version)
	s.Version = version
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSplitAndAssemble(t *testing.T) {
	small := encoded(t, 1, 10)
	big := encoded(t, 2, 5000)
	a := NewAssembler()
	for _, r := range append(Split("m", Stamp{Version: 1}, small, 1<<20), Split("m", Stamp{Version: 2}, big, 4096)...) {
		if err := a.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	got, ok := a.Latest("m")
	if !ok || got.Version != 2 || !bytes.Equal(got.Data, big) {
		t.Fatalf("latest = v%d (%d bytes), want v2 (%d bytes)", got.Version, len(got.Data), len(big))
	}
	if recs := Split("m", Stamp{Version: 2}, big, 4096); len(recs) != (len(big)+4095)/4096+1 {
		t.Fatalf("%d records for %d bytes", len(recs), len(big))
	}
	for _, r := range Split("m", Stamp{Version: 2}, big, 4096) {
		if len(r.Value) > 4096 {
			t.Fatalf("record of %d bytes", len(r.Value))
		}
	}
}

// compact keeps the last record of each key, in the order of those last
// records, as log compaction does.
func compact(recs []Record) []Record {
	last := map[string]int{}
	for i, r := range recs {
		last[r.Key] = i
	}
	var out []Record
	for i, r := range recs {
		if last[r.Key] == i {
			out = append(out, r)
		}
	}
	return out
}

// TestCompactedTopicSurvivesHalfWrittenSnapshot writes v1 and v2 in chunks,
// then half of v3 (the writer dies), compacts the topic, and reads it back:
// the reader must still find v2 whole.
func TestCompactedTopicSurvivesHalfWrittenSnapshot(t *testing.T) {
	var log []Record
	for v := uint64(1); v <= 2; v++ {
		log = append(log, Split("m", Stamp{Version: v}, encoded(t, v, 3000), 2048)...)
	}
	v3 := Split("m", Stamp{Version: 3}, encoded(t, 3, 3000), 2048)
	log = append(log, v3[:len(v3)/2]...)
	a := NewAssembler()
	for _, r := range compact(log) {
		_ = a.Add(r) // chunks of v1 that lost their manifest are reported, not fatal
	}
	got, ok := a.Latest("m")
	if !ok || got.Version != 2 {
		t.Fatalf("latest after compaction = %+v, %v; want v2", got.Version, ok)
	}
	if _, err := Decode(got.Data); err != nil {
		t.Fatal(err)
	}
}

func TestAssemblerRejectsCorruptChunk(t *testing.T) {
	recs := Split("m", Stamp{Version: 5}, encoded(t, 5, 3000), 2048)
	recs[1].Value = bytes.Clone(recs[1].Value)
	recs[1].Value[7] ^= 1
	a := NewAssembler()
	var last error
	for _, r := range recs {
		last = a.Add(r)
	}
	if !errors.Is(last, ErrChecksum) {
		t.Fatalf("manifest of a corrupt snapshot: err = %v", last)
	}
	if _, ok := a.Latest("m"); ok {
		t.Fatal("a corrupt snapshot was kept")
	}
}

func FuzzDecode(f *testing.F) {
	good, err := Encode(testSnapshot(3, 40, 0.3, 9))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(Magic))
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Encode(s)
		if err != nil {
			t.Fatalf("a decoded snapshot does not encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
	})
}

func FuzzDecodeBody(f *testing.F) {
	// The checksum stops random bytes early; this target fuzzes the body
	// behind a valid checksum so that the parser itself is exercised.
	good, err := Encode(testSnapshot(2, 30, 0.5, 10))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good[len(Magic)+2 : len(good)-4])
	graded := testSnapshot(2, 30, 0.5, 11)
	graded.Progress = &Progress{
		ReviewGrades: NewGrades([]review.Grade{{Class: "spam", Prob: 0.9, Correct: true}, {Class: "ham", Prob: 0.6}}),
		Drift:        NewDriftWatch(map[string]int64{"labels": 300}, map[string]int{"labels": 1}, &DriftAlarm{Detector: "labels", Examples: 100}, []DriftLabel{{ID: "7", Predicted: "spam", Label: "ham", Fed: true}}),
	}
	for _, s := range []*Snapshot{srSnapshot(), kernelSnapshot(f), graded} {
		data, err := Encode(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[len(Magic)+2 : len(data)-4])
	}
	probes := []vector.Vector{vector.Dense([]float64{1, -2, 0.5}), vector.Sparse([]int32{0, 7, 90}, []float64{1, 2, 3})}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := withChecksum(body)
		s, err := Decode(data)
		if err != nil {
			return
		}
		if _, err := Encode(s); err != nil {
			t.Fatalf("decoded snapshot does not encode: %v", err)
		}
		if s.Model.Ready() {
			for _, x := range probes {
				s.Model.Predict(x) // must not panic, whatever the input's kind
			}
		}
	})
}

func srSnapshot() *Snapshot {
	s := testSnapshot(4, 30, 1, 3)
	s.Params = Params{Algorithm: "sr", Lambda: 0.1, SRDelta: 0.2, SRGamma: 0.5}
	s.Model.Problems = s.Model.Problems[:3]
	s.Model.Centroids = [][]float64{{1, 2, 3}, nil, {-1, 0.5, 2}, {0, 0, 1}}
	return s
}

func kernelSnapshot(f *testing.F) *Snapshot {
	km, err := kernel.NewMap([]vector.Vector{vector.Sparse([]int32{1, 70}, []float64{0.5, 1}), vector.Sparse([]int32{3}, []float64{2})}, 0)
	if err != nil {
		f.Fatal(err)
	}
	s := testSnapshot(3, km.Dim(), 1, 5)
	s.Model.Map = km
	return s
}

// TestSpectralRegressionModelRoundTrip checks that an SR model keeps its
// centroids (one class without a centroid included) and its parameters,
// and that centroids that do not fit the model are refused.
func TestSpectralRegressionModelRoundTrip(t *testing.T) {
	s := srSnapshot()
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip changed the SR snapshot:\n got %+v\nwant %+v", got.Model, s.Model)
	}
	s.Model.Centroids[0] = []float64{1, 2}
	data, err = Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(data); !errors.Is(err, ErrNotSnapshot) {
		t.Fatalf("centroid of the wrong length: %v, want ErrNotSnapshot", err)
	}
}

// TestKernelMapRoundTrip checks that a model's kernel map (dense and sparse
// landmarks) survives the snapshot: landmarks whose products with any row
// are those they had (a mostly-zero dense one is written as pairs and
// comes back sparse), the same scores, format 2; a model without a map
// stays in format 1.
func TestKernelMapRoundTrip(t *testing.T) {
	dense := []vector.Vector{vector.Dense([]float64{1, 0, 2, 0, 0, 0}), vector.Dense([]float64{0, 1, 1, 1, 1, 1}), vector.Dense([]float64{0, 0, 0, 0, 0, 3})}
	sparse := []vector.Vector{vector.Sparse([]int32{1, 70}, []float64{0.5, 1}), vector.Sparse([]int32{3}, []float64{2}), vector.Sparse([]int32{1, 3, 9}, []float64{1, 1, 1})}
	for name, landmarks := range map[string][]vector.Vector{"dense": dense, "sparse": sparse} {
		km, err := kernel.NewMap(landmarks, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := testSnapshot(3, km.Dim(), 1, 5)
		s.Model.Map = km
		data, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if v := data[len(Magic)]; v != 2 {
			t.Errorf("%s: format %d, want 2", name, v)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, z := range got.Model.Map.Landmarks {
			for _, x := range landmarks {
				if a, b := vector.Dot(z, x), vector.Dot(km.Landmarks[i], x); a != b {
					t.Fatalf("%s: landmark %d (%+v) has product %v with %+v after the round trip, %v before", name, i, z, a, x, b)
				}
			}
		}
		for _, x := range landmarks {
			a, b := s.Model.Scores(x, nil), got.Model.Scores(x, nil)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: scores %v after the round trip, %v before", name, b, a)
			}
		}
	}
	plain, err := Encode(testSnapshot(2, 10, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if v := plain[len(Magic)]; v != 1 {
		t.Errorf("a model without a map is written in format %d, want 1", v)
	}
}
