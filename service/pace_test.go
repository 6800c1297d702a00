package service

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
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
			p := solvePacer{share: share}
			var first, now time.Time
			var busy time.Duration
			rows := 500
			for i := range 200 {
				if i%20 == 0 {
					rows = 100 + rng.IntN(20000)
				}
				start := now
				if nb := p.notBefore(rows); nb.After(start) {
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
				p.done(cost, rows, now)
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
	p := solvePacer{share: 0.25}
	if nb := p.notBefore(1255); !nb.IsZero() {
		t.Fatalf("the first solve waits until %v", nb)
	}
	end := time.Unix(100, 0)
	p.done(320*time.Millisecond, 1255, end)
	estimate := 320 * time.Millisecond * 20000 / 1255
	want := end.Add(3 * (320*time.Millisecond + estimate))
	if nb := p.notBefore(20000); nb.Sub(want).Abs() > time.Millisecond {
		t.Fatalf("the solve of the grown window may start at %v, want %v", nb.Sub(end), want.Sub(end))
	}
	p.share = 1
	if nb := p.notBefore(20000); !nb.IsZero() {
		t.Fatalf("share 1 waits until %v", nb)
	}
}

// TestPaceEndsWithTheBacklog: a solve held back by the pacer waits only
// while the examples are backlogged, and stops waiting when the context
// ends.
func TestPaceEndsWithTheBacklog(t *testing.T) {
	svc, err := New(testConfig(t, []string{"127.0.0.1:1"}, "schedule.solve_examples=100"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	if !svc.pace(ctx, later) {
		t.Fatal("pace without a backlog reported an ended context")
	}
	svc.unread.expect(partitionKey{"examples", 0}, 0, 1000)
	go func() {
		time.Sleep(20 * time.Millisecond)
		svc.unread.read(&kafka.Message{Topic: "examples", Partition: 0, Offset: 999, HighWaterMark: 1000})
	}()
	if !svc.pace(ctx, later) {
		t.Fatal("pace reported an ended context when the backlog was read")
	}
	svc.unread.expect(partitionKey{"examples", 0}, 0, 1000)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if svc.pace(ctx, later) {
		t.Fatal("pace reported a running context after it ended")
	}
}
