package online

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/model"
	"streamer/online/train"
	"streamer/synth"
)

// inlineStream observes 600 clustered rows inline (without Run), one in
// ten labeled, into a graph window of 250 with BatchInline set or not,
// solving every 150 rows, and returns the learner's window keys, its
// labeled count and its last model. Observe returns the evicted ids of
// the rows it inserts one by one, none of those it collects for a batch.
func inlineStream(t *testing.T, batch bool, workers int) ([]uint64, int, *model.Model) {
	t.Helper()
	l, err := NewLearner(LearnerConfig{
		Features: 6, Window: anngraph.Config{MaxExamples: 250, K: 5, Metric: anngraph.Euclidean, InsertWorkers: workers},
		Params: train.Params{Algorithm: train.LapSVM, LambdaI: 1}, BatchInline: batch,
	})
	if err != nil {
		t.Fatal(err)
	}
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 600, Dim: 6, Clusters: 2, Spread: 0.4, Seed: 7})
	returned := 0
	for i, x := range xs {
		label := ""
		if i%10 == 0 {
			label = fmt.Sprint(cs[i])
		}
		ev, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), x, label)
		if err != nil {
			t.Fatal(err)
		}
		returned += len(ev)
		if (i+1)%150 == 0 {
			if _, err := l.Solve(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, labeled := l.WindowSize()
	l.mu.Lock()
	keys := l.window.snapshot().keys
	l.mu.Unlock()
	if len(keys) != n || n != 250 {
		t.Fatalf("window of %d rows (%d keys), want 250", n, len(keys))
	}
	for _, k := range keys {
		if _, ok := l.idOf[k]; !ok {
			t.Fatalf("window row %d has no id", k)
		}
	}
	if len(l.idOf) != n {
		t.Fatalf("the learner knows %d rows, the window holds %d", len(l.idOf), n)
	}
	if want := map[bool]int{false: 350, true: 0}[batch]; returned != want {
		t.Fatalf("Observe returned %d evicted ids, want %d", returned, want)
	}
	m := l.InForce().Model
	return keys, labeled, m
}

// TestBatchInline: rows observed inline and inserted by batches make the
// window Insert would (the same rows, labels and bookkeeping), and the
// same models whatever the number of cores.
func TestBatchInline(t *testing.T) {
	wantKeys, wantLabeled, _ := inlineStream(t, false, 1)
	keys, labeled, one := inlineStream(t, true, 1)
	if !slices.Equal(keys, wantKeys) || labeled != wantLabeled {
		t.Fatalf("batched: %d labeled of window %v; one by one: %d of %v", labeled, keys, wantLabeled, wantKeys)
	}
	_, _, two := inlineStream(t, true, 2)
	if one == nil || !reflect.DeepEqual(withoutStats(one), withoutStats(two)) {
		t.Fatal("batched inline on one core and on two made different models")
	}
}

// withoutStats returns m without its solves' statistics, which carry
// their times.
func withoutStats(m *model.Model) model.Model {
	c := *m
	c.Problems = slices.Clone(m.Problems)
	for k := range c.Problems {
		c.Problems[k].Stats = model.Stats{}
	}
	return c
}
