package anngraphtest

import (
	"slices"
	"testing"
)

func TestSampleRows(t *testing.T) {
	if got := SampleRows(4, 10, 1); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("SampleRows(4, 10) = %v, want every row", got)
	}
	a, b := SampleRows(1000, 50, 7), SampleRows(1000, 50, 7)
	if !slices.Equal(a, b) {
		t.Errorf("two samples of one seed differ: %v, %v", a, b)
	}
	if len(a) != 50 || !slices.IsSorted(a) || len(slices.Compact(slices.Clone(a))) != 50 || a[0] < 0 || a[49] >= 1000 {
		t.Errorf("SampleRows(1000, 50) = %v, want 50 distinct rows in order", a)
	}
}

func TestRecall(t *testing.T) {
	exact := []float64{1, 2, 2, 3}
	for _, c := range []struct {
		name        string
		listed      []float64
		k           int
		hits, total float64
	}{
		{"exact", []float64{1, 2, 2}, 3, 3, 3},
		{"a tie at the k-th distance is a hit", []float64{1, 2}, 2, 2, 2},
		{"beyond the k-th", []float64{1, 3, 2}, 3, 2, 3},
		{"only the first k count", []float64{1, 2, 2, 3}, 3, 3, 3},
		{"a short list", []float64{1}, 3, 1, 3},
		{"k beyond the exact", []float64{1, 2, 2, 3}, 10, 4, 4},
		{"rounding within 1e-9", []float64{1 + 1e-12}, 1, 1, 1},
		{"no exact neighbours", []float64{1}, 3, 0, 0},
	} {
		ex := exact
		if c.name == "no exact neighbours" {
			ex = nil
		}
		if h, n := Recall(c.listed, ex, c.k); h != c.hits || n != c.total {
			t.Errorf("%s: Recall = %v of %v, want %v of %v", c.name, h, n, c.hits, c.total)
		}
	}
}

func TestEnvInt(t *testing.T) {
	const name = "ANNGRAPHTEST_SIZE"
	for _, c := range []struct {
		value string
		want  int
	}{{"", 7}, {"12", 12}, {"0", 7}, {"-3", 7}, {"x", 7}} {
		t.Setenv(name, c.value)
		if got := EnvInt(name, 7); got != c.want {
			t.Errorf("%s=%q: EnvInt = %d, want %d", name, c.value, got, c.want)
		}
	}
}
