package anngraph

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"streamer/internal/testlevel"
	"streamer/vector"
)

// batchedWindow streams items through a new window in batches of the
// given size and returns its view and the keys it evicted.
func batchedWindow(t *testing.T, cfg Config, items []Item, size int) (*View, []uint64) {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var evicted []uint64
	for i := 0; i < len(items); i += size {
		ev, err := w.InsertBatch(items[i:min(i+size, len(items))])
		if err != nil {
			t.Fatal(err)
		}
		evicted = append(evicted, ev...)
	}
	return w.Snapshot(), evicted
}

// TestInsertBatchWorkersAgree: the window a sequence of batches builds is
// the same whatever the number of workers that place them.
func TestInsertBatchWorkersAgree(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		data []vector.Vector
	}{
		{"dense", Config{MaxExamples: 300, K: 6, M: 5, Metric: Euclidean}, denseData(1000, 16, 21)},
		{"sparse by age", Config{MaxExamples: 300, MaxAge: 200 * time.Second, K: 6, M: 5}, sparseData(1000, 22)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := streamedItems(tc.data)
			var want *View
			for _, workers := range []int{1, 2, 3} {
				cfg := tc.cfg
				cfg.InsertWorkers = workers
				v, _ := batchedWindow(t, cfg, items, 45)
				if want == nil {
					want = v
				} else if !reflect.DeepEqual(v, want) {
					t.Fatalf("%d workers built another window than 1", workers)
				}
			}
		})
	}
}

// TestInsertBatchOfOneIsInsert: batches of one point are Insert.
func TestInsertBatchOfOneIsInsert(t *testing.T) {
	cfg := Config{MaxExamples: 200, MaxAge: 150 * time.Second, K: 6, M: 5, Seed: 9, InsertWorkers: 2}
	items := streamedItems(sparseData(700, 23))
	got, gotEvicted := batchedWindow(t, cfg, items, 1)
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wantEvicted []uint64
	for _, it := range items {
		ev, err := w.Insert(it.Key, it.Time, it.Vec)
		if err != nil {
			t.Fatal(err)
		}
		wantEvicted = append(wantEvicted, ev...)
	}
	if !slices.Equal(gotEvicted, wantEvicted) {
		t.Fatalf("batches of one evicted %v, Insert %v", gotEvicted, wantEvicted)
	}
	if !reflect.DeepEqual(got, w.Snapshot()) {
		t.Fatal("batches of one built another window than Insert")
	}
}

// TestInsertBatchEvictsAsInsert: which points a batch keeps and evicts, by
// count and by age, and in what order, is what Insert does point by point;
// only the graph and the lists are built differently.
func TestInsertBatchEvictsAsInsert(t *testing.T) {
	cfg := Config{MaxExamples: 120, MaxAge: 60 * time.Second, K: 5, M: 4, Metric: Euclidean}
	items := streamedItems(denseData(900, 8, 24))
	_, want := batchedWindow(t, cfg, items, 1)
	for _, size := range []int{7, 64, 500} {
		v, got := batchedWindow(t, cfg, items, size)
		if !slices.Equal(got, want) {
			t.Fatalf("batches of %d evicted %v, Insert %v", size, got, want)
		}
		if n := v.Len() + len(got); n != len(items) {
			t.Fatalf("batches of %d: %d live + %d evicted ≠ %d", size, v.Len(), len(got), len(items))
		}
	}
}

// TestInsertBatchRecallWhileSliding holds batched windows to the recall
// that TestGraphRecallWhileSliding holds Insert to.
func TestInsertBatchRecallWhileSliding(t *testing.T) {
	testlevel.Long(t, "slow under -race; TestInsertBatchWorkersAgree runs the workers")
	for _, tc := range []struct {
		name   string
		data   []vector.Vector
		metric Metric
	}{
		{"dense", denseData(3000, 24, 8), Euclidean},
		{"sparse", sparseData(3000, 9), Cosine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{MaxExamples: 500, Metric: tc.metric, Seed: 3, InsertWorkers: 2}
			items := streamedItems(tc.data)
			one, _ := batchedWindow(t, cfg, items, 1)
			many, _ := batchedWindow(t, cfg, items, 100)
			r1, rb := recallOf(one), recallOf(many)
			t.Logf("recall@10 after sliding 5 windows: %.4f one by one, %.4f in batches", r1, rb)
			if rb < 0.95 || rb < r1-0.01 {
				t.Fatalf("recall@10 in batches %.4f, one by one %.4f: want ≥ 0.95 and within 0.01", rb, r1)
			}
		})
	}
}

func TestInsertBatchErrors(t *testing.T) {
	dense := denseData(4, 3, 25)
	for _, tc := range []struct {
		name  string
		items []Item
		want  string
	}{
		{"key twice", []Item{{Key: 7, Vec: dense[0]}, {Key: 7, Vec: dense[1]}}, "key 7: key already in the window"},
		{"key in the window", []Item{{Key: 8, Vec: dense[0]}, {Key: 1, Vec: dense[1]}}, "key 1: key already in the window"},
		{"kinds mixed", []Item{{Key: 9, Vec: dense[0]}, {Key: 10, Vec: vector.Sparse([]int32{1}, []float64{1})}}, "key 10: vector is sparse"},
		{"other length", []Item{{Key: 11, Vec: vector.Dense([]float64{1, 2})}}, "key 11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(Config{MaxExamples: 10, Metric: Euclidean})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.InsertBatch([]Item{{Key: 1, Vec: dense[3]}}); err != nil {
				t.Fatal(err)
			}
			_, err = w.InsertBatch(tc.items)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if w.Len() != 1 {
				t.Fatalf("a refused batch left %d points, want 1", w.Len())
			}
		})
	}
	t.Run("mixed in an empty window", func(t *testing.T) {
		w, err := New(Config{MaxExamples: 10})
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.InsertBatch([]Item{{Key: 1, Vec: dense[0]}, {Key: 2, Vec: vector.Sparse([]int32{1}, []float64{1})}})
		if err == nil || w.Len() != 0 {
			t.Fatalf("error %v with %d points, want an error and none", err, w.Len())
		}
	})
}
