package servicebench

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// TestDrainTextsCycleWithDistinctIDs reads a small gzipped JSONL file and
// cycles it: texts and labels repeat, ids do not.
func TestDrainTextsCycleWithDistinctIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(`{"id": "a", "label": "x", "text": "one"}
{"id": "b", "text": ""}
{"id": "c", "label": 3, "text": "two"}
`))
	zw.Close()
	f.Close()
	next, err := drainTexts(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []drainText{{"a", "one", "x"}, {"c", "two", "3"}, {"a~1", "one", "x"}, {"c~1", "two", "3"}, {"a~2", "one", "x"}}
	for i, w := range want {
		if got := next(i); got != w {
			t.Errorf("example %d = %+v, want %+v", i, got, w)
		}
	}
}

func TestDrainQuantile(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ q, want float64 }{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0, 1}, {1, 10}} {
		if got := quantile(sorted, c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing is not 0")
	}
}
