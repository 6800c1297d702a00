package consumer

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"streamer/config"
)

// TestSolvePacerBoundsTheShare runs solves whose windows grow, shrink and
// stay put, with costs off their estimates either way, each started as
// soon as the pacer allows. Counting the solve about to start at its
// estimate, the solves never took more than the share of the time since
// the first began; with costs that match their estimates they take the
// share exactly.
func TestSolvePacerBoundsTheShare(t *testing.T) {
	for _, share := range []float64{0.1, 0.25, 0.5, 0.9} {
		for _, noise := range []float64{0, 0.5} {
			rng := rand.New(rand.NewPCG(1, uint64(share*100)))
			p := SolvePacer{Share: share}
			var first, now time.Time
			var busy time.Duration
			rows := 500
			for i := range 200 {
				if i%20 == 0 {
					rows = 100 + rng.IntN(20000)
				}
				start := now
				if nb := p.NotBefore(rows); nb.After(start) {
					start = nb
				}
				if i == 0 {
					first = start
				} else {
					charged := busy + p.estimate
					if got := float64(charged) / float64(start.Add(p.estimate).Sub(first)); got > share+1e-9 {
						t.Fatalf("share %v, noise %v, solve %d: solves take %v of the time", share, noise, i, got)
					}
				}
				cost := time.Duration(float64(rows) * float64(time.Millisecond) * (1 + noise*(2*rng.Float64()-1)))
				now = start.Add(cost)
				busy += cost
				p.Done(cost, rows, now)
			}
			if got := float64(busy) / float64(now.Sub(first)); noise == 0 && got < share-0.01 {
				t.Errorf("share %v: solves with exact estimates take only %v of the time", share, got)
			}
		}
	}
}

// TestSolvePacerChargesAGrownWindow: after a solve of 0.32 s on the 1,255
// rows a catch-up had read by then, a solve of the full window of 20,000
// is charged before it starts: it waits for its estimate (5.1 s) and the
// last solve together, times (1 − share)/share.
func TestSolvePacerChargesAGrownWindow(t *testing.T) {
	p := SolvePacer{Share: 0.25}
	if nb := p.NotBefore(1255); !nb.IsZero() {
		t.Fatalf("the first solve waits until %v", nb)
	}
	end := time.Unix(100, 0)
	p.Done(320*time.Millisecond, 1255, end)
	estimate := 320 * time.Millisecond * 20000 / 1255
	want := end.Add(3 * (320*time.Millisecond + estimate))
	if nb := p.NotBefore(20000); nb.Sub(want).Abs() > time.Millisecond {
		t.Fatalf("the solve of the grown window may start at %v, want %v", nb.Sub(end), want.Sub(end))
	}
	p.Share = 1
	if nb := p.NotBefore(20000); !nb.IsZero() {
		t.Fatalf("share 1 waits until %v", nb)
	}
}

// TestPaceEndsWithTheBacklog: a solve held back by the pacer waits only
// while the examples are backlogged, and stops waiting when the context
// ends.
func TestPaceEndsWithTheBacklog(t *testing.T) {
	sched := testSchedule(t, "schedule.solve_examples=100")
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	if !sched.Pace(ctx, later) {
		t.Fatal("pace without a backlog reported an ended context")
	}
	sched.Backlog.Expect("examples", 0, 0, 1000)
	go func() {
		time.Sleep(20 * time.Millisecond)
		sched.Backlog.Read(&kafka.Message{Topic: "examples", Partition: 0, Offset: 999, HighWaterMark: 1000})
	}()
	if !sched.Pace(ctx, later) {
		t.Fatal("pace reported an ended context when the backlog was read")
	}
	sched.Backlog.Expect("examples", 0, 0, 1000)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if sched.Pace(ctx, later) {
		t.Fatal("pace reported a running context after it ended")
	}
}

// TestSolvesArePacedOnlyBehindABacklog: the pause after a solve applies
// while more examples wait on the brokers than make a solve due.
func TestSolvesArePacedOnlyBehindABacklog(t *testing.T) {
	sched := testSchedule(t, "schedule.solve_examples=100")
	if sched.Backlogged() {
		t.Fatal("backlogged with nothing known on the brokers")
	}
	sched.Backlog.Expect("examples", 0, 0, 60)
	sched.Backlog.Expect("labels", 0, 0, 500)
	if sched.Backlogged() {
		t.Fatal("backlogged with 60 examples unread, fewer than make a solve due")
	}
	sched.Backlog.Expect("examples", 1, 0, 60)
	if !sched.Backlogged() {
		t.Fatal("not backlogged with 120 examples unread")
	}
}

// TestAwaitLabelsEnds: the wait ends when the labels are read, at
// schedule.labels_wait, or at once when the context ends.
func TestAwaitLabelsEnds(t *testing.T) {
	sched := testSchedule(t, "schedule.labels_wait=100ms")
	waits := func(ended string) float64 {
		return testutil.ToFloat64(sched.Metrics.LabelsWaits.WithLabelValues(ended))
	}
	if !sched.AwaitLabels(context.Background()) || waits("read")+waits("timeout") != 0 {
		t.Fatal("waited with nothing unread")
	}
	sched.Backlog.Expect("labels", 0, 0, 5)
	if !sched.AwaitLabels(context.Background()) || waits("timeout") != 1 {
		t.Fatalf("waits that timed out: %v, want 1", waits("timeout"))
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		sched.Backlog.Read(&kafka.Message{Topic: "labels", Partition: 0, Offset: 4, HighWaterMark: 5})
	}()
	sched.Config.Schedule.LabelsWait = time.Minute
	if !sched.AwaitLabels(context.Background()) || waits("read") != 1 {
		t.Fatalf("waits that ended with the labels read: %v, want 1", waits("read"))
	}
	sched.Backlog.Expect("labels", 0, 0, 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if sched.AwaitLabels(ctx) {
		t.Fatal("awaitLabels reported a running context after it ended")
	}
}

// testSchedule returns a schedule of the default configuration with the
// overrides, on an empty backlog.
func testSchedule(t *testing.T, overrides ...string) *Schedule {
	t.Helper()
	cfg, err := config.Load("", overrides)
	if err != nil {
		t.Fatal(err)
	}
	return &Schedule{Config: cfg, Backlog: NewBacklog(), Metrics: NewMetrics(prometheus.NewRegistry()), Log: slog.New(slog.DiscardHandler)}
}
