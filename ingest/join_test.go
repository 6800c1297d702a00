package ingest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func newTestJoin(t *testing.T, cfg JoinConfig) *Join {
	t.Helper()
	j, err := NewJoin(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestJoinBothOrders(t *testing.T) {
	j := newTestJoin(t, JoinConfig{})
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	p := Prediction{Class: "spam", Score: 0.7, ModelVersion: 3, At: at}

	// Label after example: the usual late label.
	if _, ok := j.Example("a", p, false); ok {
		t.Fatal("example a found a label that was never sent")
	}
	if got, seen, first := j.Label("a", "ham"); !seen || !first || got != p {
		t.Fatalf("Label(a) = %+v, %v; want %+v, true", got, seen, p)
	}
	// A second label for a joined example joins again: a re-label.
	if got, seen, first := j.Label("a", "spam"); !seen || first || got != p {
		t.Fatalf("re-label of a = %+v, %v", got, seen)
	}

	// Label before example: it waits, the latest label winning.
	if _, seen, _ := j.Label("b", "spam"); seen {
		t.Fatal("label b joined an example never seen")
	}
	j.Label("b", "ham")
	if label, ok := j.Example("b", Prediction{}, false); !ok || label != "ham" {
		t.Fatalf("Example(b) = %q, %v; want ham, true", label, ok)
	}
	if _, ok := j.Example("b", Prediction{}, false); ok {
		t.Fatal("the pending label of b was handed out twice")
	}
	// b is now remembered as labelled, so this is a re-label too.
	if _, seen, _ := j.Label("b", "spam"); !seen {
		t.Fatal("label for b after its example was not joined")
	}

	want := JoinStats{Pending: 0, Recent: 2, LateJoins: 3, EarlyJoins: 1, Relabels: 2}
	if got := j.Stats(); got != want {
		t.Fatalf("stats = %+v, want %+v", got, want)
	}
}

func TestJoinBounds(t *testing.T) {
	j := newTestJoin(t, JoinConfig{PendingLabels: 2, RecentExamples: 3})
	for k := range 3 {
		j.Label(fmt.Sprint("early", k), "x") // early0 is evicted by early2
	}
	if _, ok := j.Example("early0", Prediction{}, false); ok {
		t.Error("the oldest pending label survived eviction")
	}
	for _, id := range []string{"early1", "early2"} {
		if _, ok := j.Example(id, Prediction{}, false); !ok {
			t.Errorf("pending label %s was lost", id)
		}
	}
	// Recent now holds early0, early1, early2; two more examples push out
	// the two oldest.
	j.Example("e3", Prediction{}, false)
	j.Example("e4", Prediction{}, false)
	if _, seen, _ := j.Label("early0", "x"); seen {
		t.Error("the oldest example survived eviction")
	}
	if _, seen, _ := j.Label("early2", "x"); !seen {
		t.Error("a recent example was forgotten")
	}
	s := j.Stats()
	if s.Pending != 1 || s.Recent != 3 || s.PendingEvictions != 1 || s.RecentEvictions != 2 || s.EarlyJoins != 2 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestJoinConfigValidate(t *testing.T) {
	for _, cfg := range []JoinConfig{{PendingLabels: -1}, {RecentExamples: -1}} {
		if _, err := NewJoin(cfg); err == nil {
			t.Errorf("NewJoin(%+v) accepted a negative size", cfg)
		}
	}
}

// TestJoinConcurrent sends every example and its one label from different
// goroutines in random order; each pair must join exactly once.
func TestJoinConcurrent(t *testing.T) {
	const pairs, workers = 4000, 8
	j := newTestJoin(t, JoinConfig{PendingLabels: pairs, RecentExamples: pairs})
	type event struct {
		id      string
		isLabel bool
	}
	events := make([]event, 0, 2*pairs)
	for k := range pairs {
		id := fmt.Sprint("ex-", k)
		events = append(events, event{id, false}, event{id, true})
	}
	rand.New(rand.NewPCG(21, 22)).Shuffle(len(events), func(a, b int) { events[a], events[b] = events[b], events[a] })

	var wg sync.WaitGroup
	var mu sync.Mutex
	joined := map[string]int{}
	for w := range workers {
		wg.Go(func() {
			for k := w; k < len(events); k += workers {
				e := events[k]
				var ok bool
				if e.isLabel {
					_, ok, _ = j.Label(e.id, "y")
				} else {
					_, ok = j.Example(e.id, Prediction{Class: "y"}, false)
				}
				if ok {
					mu.Lock()
					joined[e.id]++
					mu.Unlock()
				}
				if k%97 == 0 {
					j.Stats()
				}
			}
		})
	}
	wg.Wait()
	for k := range pairs {
		if id := fmt.Sprint("ex-", k); joined[id] != 1 {
			t.Fatalf("%s joined %d times, want once", id, joined[id])
		}
	}
	s := j.Stats()
	if s.LateJoins+s.EarlyJoins != pairs || s.Pending != 0 || s.Relabels != 0 || s.PendingEvictions+s.RecentEvictions != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestJoinFirstLabel(t *testing.T) {
	j, err := NewJoin(JoinConfig{})
	if err != nil {
		t.Fatal(err)
	}
	j.Example("self", Prediction{Class: "a"}, true)
	if _, seen, first := j.Label("self", "a"); !seen || first {
		t.Fatalf("label of an example that came labeled: seen=%v first=%v", seen, first)
	}
	j.Label("early", "b")
	j.Example("early", Prediction{}, false)
	if _, seen, first := j.Label("early", "b"); !seen || first {
		t.Fatalf("second label of an early-joined example: seen=%v first=%v", seen, first)
	}
	j.Example("late", Prediction{}, false)
	if _, seen, first := j.Label("late", "b"); !seen || !first {
		t.Fatalf("first late label: seen=%v first=%v", seen, first)
	}
}
