package servicebench

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDrainTextsCycleWithDistinctIDs reads a small gzipped JSONL file and
// cycles it: texts, vectors and labels repeat, ids do not.
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
{"id": "d", "label": "y", "vector": [1, 2.5]}
`))
	zw.Close()
	f.Close()
	next, err := drainTexts(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []drainText{
		{id: "a", text: "one", label: "x"}, {id: "c", text: "two", label: "3"}, {id: "d", vector: []float64{1, 2.5}, label: "y"},
		{id: "a~1", text: "one", label: "x"}, {id: "c~1", text: "two", label: "3"}, {id: "d~1", vector: []float64{1, 2.5}, label: "y"},
	}
	for i, w := range want {
		if got := next(i); !reflect.DeepEqual(got, w) {
			t.Errorf("example %d = %+v, want %+v", i, got, w)
		}
	}
	if got := string(next(2).value()); got != `{"id":"d","vector":[1,2.5]}` {
		t.Errorf("a vector example's record %s", got)
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
