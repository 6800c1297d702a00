package snapshot

import (
	"bufio"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"streamer/vector"
)

var updateFixtures = flag.Bool("update-fixtures", false, "rewrite testdata/fixtures.json from the committed snapshot files")

// fixtureFiles are snapshots written by `streamer fit` (and one with every
// field of a service's snapshot) that later builds must keep reading and
// scoring the same way.
var fixtureFiles = []string{
	"glyphs-svm.snap",        // ten classes, one versus rest, dense rows
	"glyphs-sr.snap",         // spectral regression: centroids
	"glyphs-sr-rbf.snap",     // spectral regression over a Nyström map
	"glyphs-lapsvm-rbf.snap", // one versus rest over a Nyström map
	"mail-svm.snap",          // binary, sparse text weights
	"mail-da.snap",           // binary, with DA temperatures
	"service-sr-rbf.snap",    // every field a service's snapshot carries
}

// fixtureScore is what a fixture model says of one row.
type fixtureScore struct {
	Class  int       `json:"class"`
	Prob   float64   `json:"prob"`
	Scores []float64 `json:"scores"`
}

// TestCommittedSnapshotsDecodeAndScore reads every committed snapshot and
// checks that it scores the rows as recorded in testdata/fixtures.json.
func TestCommittedSnapshotsDecodeAndScore(t *testing.T) {
	rows := fixtureRows(t)
	if *updateFixtures {
		writeServiceFixture(t)
	}
	got := map[string][]fixtureScore{}
	for _, name := range fixtureFiles {
		s, err := ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = scoreRows(s, rows[!strings.HasPrefix(name, "mail")])
	}
	path := filepath.Join("testdata", "fixtures.json")
	if *updateFixtures {
		writeJSON(t, path, got)
		return
	}
	var want map[string][]fixtureScore
	readJSON(t, path, &want)
	for _, name := range fixtureFiles {
		compareScores(t, name, got[name], want[name])
	}
}

// TestServiceFixtureKeepsItsFields checks the fields beside the model of
// the snapshot written with every field set.
func TestServiceFixtureKeepsItsFields(t *testing.T) {
	s, err := ReadFile(filepath.Join("testdata", "service-sr-rbf.snap"))
	if err != nil {
		t.Fatal(err)
	}
	want := serviceFields()
	if s.Name != want.Name || s.Stamp() != want.Stamp() || !s.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("identity %s %v %v, want %s %v %v", s.Name, s.Stamp(), s.CreatedAt, want.Name, want.Stamp(), want.CreatedAt)
	}
	if !reflect.DeepEqual(s.Offsets, want.Offsets) || s.Stats != want.Stats || s.Window != want.Window {
		t.Errorf("offsets, stats or window differ: %+v %+v %+v", s.Offsets, s.Stats, s.Window)
	}
	if !reflect.DeepEqual(s.Progress, want.Progress) {
		t.Errorf("progress %+v, want %+v", s.Progress, want.Progress)
	}
}

func serviceFields() *Snapshot {
	return &Snapshot{
		Name: "glyphs", Version: 17, Epoch: 3,
		CreatedAt: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC),
		Window:    Window{MaxExamples: 5000, MaxAge: time.Hour, K: 10, Laplacian: "normalized", Degree: 3, Weights: "heat"},
		Offsets: []Offset{
			{Topic: "examples", Partition: 0, WindowStart: 100, Next: 2600},
			{Topic: "labels", Partition: 1, WindowStart: 7, Next: 90},
		},
		Stats: Stats{Examples: 5000, Labels: 260, Predictions: 4990, Solves: 17, WindowSize: 5000, Labeled: 250, Objective: 1.25, Accuracy: 0.91},
		Progress: &Progress{
			Solved: true,
			Prequential: Prequential{
				Correct: 200, Total: 240, Examples: 4990, Unscored: 10,
				TruePositives:  map[string]int{"g1": 20},
				FalsePositives: map[string]int{"g1": 2},
				FalseNegatives: map[string]int{"g2": 3},
				Recent:         [][2]string{{"g1", "g1"}, {"g2", "g1"}},
				Curve:          []CurvePoint{{Labels: 100, Examples: 2000, Accuracy: 0.8, RecentAccuracy: 0.85}},
			},
			Baseline: &Prequential{Correct: 190, Total: 240, Examples: 4990},
		},
	}
}

// writeServiceFixture writes service-sr-rbf.snap: the model of
// glyphs-sr-rbf.snap with every other field of a service's snapshot set.
func writeServiceFixture(t *testing.T) {
	src, err := ReadFile(filepath.Join("testdata", "glyphs-sr-rbf.snap"))
	if err != nil {
		t.Fatal(err)
	}
	s := serviceFields()
	s.Features, s.Params, s.Model = src.Features, src.Params, src.Model
	if err := WriteFile(filepath.Join("testdata", "service-sr-rbf.snap"), s); err != nil {
		t.Fatal(err)
	}
}

// fixtureRows are the rows the fixtures score, by whether they are dense:
// the committed glyph images, and seeded sparse rows for the text models.
func fixtureRows(t *testing.T) map[bool][]vector.Vector {
	f, err := os.Open(filepath.Join("testdata", "glyphs-rows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dense []vector.Vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row struct{ Vector []float64 }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		dense = append(dense, vector.Dense(row.Vector))
	}
	r := rand.New(rand.NewPCG(7, 11))
	var sparse []vector.Vector
	for range 40 {
		seen := map[int32]bool{}
		var idx []int32
		for range 30 {
			j := int32(r.IntN(4096))
			if !seen[j] {
				seen[j] = true
				idx = append(idx, j)
			}
		}
		sortInt32(idx)
		vals := make([]float64, len(idx))
		for k := range vals {
			vals[k] = r.Float64()
		}
		v := vector.Sparse(idx, vals)
		v.Normalize()
		sparse = append(sparse, v)
	}
	return map[bool][]vector.Vector{true: dense, false: sparse}
}

func sortInt32(a []int32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func scoreRows(s *Snapshot, rows []vector.Vector) []fixtureScore {
	m := &s.Model
	m.Pack()
	var out []fixtureScore
	for _, x := range rows {
		p := m.Predict(x)
		out = append(out, fixtureScore{Class: p.Class, Prob: p.Prob, Scores: p.Scores})
	}
	return out
}

func compareScores(t *testing.T, name string, got, want []fixtureScore) {
	t.Helper()
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%s: %d scored rows, want %d", name, len(got), len(want))
	}
	const tol = 1e-9
	for i := range want {
		g, w := got[i], want[i]
		if g.Class != w.Class || math.Abs(g.Prob-w.Prob) > tol || len(g.Scores) != len(w.Scores) {
			t.Fatalf("%s row %d: class %d prob %v, want class %d prob %v", name, i, g.Class, g.Prob, w.Class, w.Prob)
		}
		for c := range w.Scores {
			if math.Abs(g.Scores[c]-w.Scores[c]) > tol*max(1, math.Abs(w.Scores[c])) {
				t.Fatalf("%s row %d class %d: score %v, want %v", name, i, c, g.Scores[c], w.Scores[c])
			}
		}
	}
}

func writeJSON(t *testing.T, path string, v any) {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
