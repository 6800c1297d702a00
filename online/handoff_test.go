package online

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/newton"
	"streamer/online/train"
	"streamer/synth"
	"streamer/vector"
)

func handoffLearner(t *testing.T, queue int, sample float64) *Learner {
	t.Helper()
	l, err := NewLearner(LearnerConfig{
		Features: 4, Window: anngraph.Config{MaxExamples: 5000, K: 5, Metric: anngraph.Euclidean},
		Params: train.Params{Algorithm: train.LapSVM, LambdaI: 1}, Queue: queue, Sample: sample,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// startRun runs l.Run until the returned stop is called or the test ends,
// once Run has taken over the insertions; stop waits for Run to return.
func startRun(t *testing.T, l *Learner) (stop func()) {
	t.Helper()
	return startPacedRun(t, l, nil)
}

// startPacedRun is startRun with inserts paced by share.
func startPacedRun(t *testing.T, l *Learner, share func() float64) (stop func()) {
	t.Helper()
	return startRunIn(t, context.Background(), l, share)
}

// startRunIn is startPacedRun under parent: cancelling parent is the stop
// as Run sees it, and stop then waits for Run to return.
func startRunIn(t *testing.T, parent context.Context, l *Learner, share func() float64) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, share) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		running := l.handoff != nil
		l.mu.Unlock()
		if running {
			return stop
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHandoffDropsUnlabeledKeepsLabeled checks the hand-off under a busy
// window: unlabeled examples beyond the queue's room are dropped and
// counted, a labeled one waits for room and enters the window.
func TestHandoffDropsUnlabeledKeepsLabeled(t *testing.T) {
	l := handoffLearner(t, 8, 0)
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: 80, Dim: 4, Clusters: 2, Seed: 1})
	startRun(t, l)
	l.winMu.Lock() // the window is busy: the goroutine of Run cannot insert
	locked := true
	defer func() {
		if locked {
			l.winMu.Unlock()
		}
	}()
	// The goroutine takes the first rows in a batch, then waits for the
	// window; the queue then keeps unlabeled rows up to its half (4).
	offered := 0
	offer := func() {
		t.Helper()
		if _, err := l.Observe(fmt.Sprint("u", offered), time.Unix(int64(offered), 0), xs[offered], ""); err != nil {
			t.Fatal(err)
		}
		offered++
	}
	for stable := false; !stable; {
		for len(l.handoff.queue) < 4 {
			if offered == 60 {
				t.Fatal("the queue never kept 4 unlabeled rows")
			}
			offer()
		}
		time.Sleep(20 * time.Millisecond)
		stable = len(l.handoff.queue) == 4 // else the goroutine was still taking rows
	}
	for range 10 {
		offer() // dropped: the queue holds its unlabeled half
	}
	// Labeled examples take the other half of the queue, then wait.
	const labeledCount = 6
	labeled := make(chan error, labeledCount)
	go func() {
		for i := range labeledCount {
			_, err := l.Observe(fmt.Sprint("l", i), time.Unix(int64(70+i), 0), xs[70+i], "a")
			labeled <- err
		}
	}()
	received := 0
	for received < labeledCount {
		select {
		case err := <-labeled:
			if err != nil {
				t.Fatal(err)
			}
			received++
			continue
		case <-time.After(100 * time.Millisecond):
		}
		break // the rest wait for the window, as they should
	}
	if received != 4 {
		t.Fatalf("%d of %d labeled examples entered a queue of 8 holding 4 unlabeled ones, want 4, and then a wait", received, labeledCount)
	}
	l.winMu.Unlock()
	locked = false
	for ; received < labeledCount; received++ {
		if err := <-labeled; err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := l.Sampling()
	n, lab := l.WindowSize()
	// Kept: those the goroutine took before it waited (1 or more), and 4.
	if int(s.Offered) != offered || s.Kept < 5 || int(s.Kept) > offered-10 || n != int(s.Kept)+labeledCount || lab != labeledCount || !l.Contains("l5") {
		t.Fatalf("offered %d (%d sent), kept %d; window %d rows (%d labeled), last labeled example in it: %v", s.Offered, offered, s.Kept, n, lab, l.Contains("l5"))
	}
	for i := int(s.Kept); i < offered; i++ {
		if l.Contains(fmt.Sprint("u", i)) {
			t.Errorf("dropped example u%d is in the window's bookkeeping", i)
		}
	}
}

// TestHandoffSampleFraction checks that a fixed sample keeps about that
// fraction of unlabeled examples, the same ones every run.
func TestHandoffSampleFraction(t *testing.T) {
	run := func() (Sampling, []bool) {
		l := handoffLearner(t, 10000, 0.3)
		stop := startRun(t, l)
		defer stop()
		xs, _ := synth.Clusters(synth.ClusterConfig{Points: 2000, Dim: 4, Clusters: 3, Seed: 2})
		for i, x := range xs {
			if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), x, ""); err != nil {
				t.Fatal(err)
			}
		}
		kept := make([]bool, len(xs))
		for i := range xs {
			kept[i] = l.Contains(fmt.Sprint(i))
		}
		return l.Sampling(), kept
	}
	s, first := run()
	if f := s.KeptFraction(); math.Abs(f-0.3) > 0.04 {
		t.Errorf("kept %.3f of the unlabeled examples, want about 0.3", f)
	}
	_, second := run()
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("example %d kept in one run and not the other", i)
		}
	}
}

// TestHandoffConcurrent runs Observe, Label, Predict and Solve beside the
// goroutine of Run (for -race), then checks that every example handed off
// reached the window.
func TestHandoffConcurrent(t *testing.T) {
	l := handoffLearner(t, 64, 0)
	stopRun := startRun(t, l)
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 1500, Dim: 4, Clusters: 2, Spread: 0.3, Seed: 3})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := l.Solve(context.Background()); err != nil && err != ErrUnchanged && err != train.ErrOneClass && err != newton.ErrNoLabels {
				t.Error(err)
				return
			}
			l.Predict(xs[0])
		}
	})
	for i, x := range xs {
		label := ""
		if i%10 == 0 {
			label = fmt.Sprint(cs[i])
		}
		if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), x, label); err != nil {
			t.Fatal(err)
		}
		if i%10 == 5 {
			l.Label(fmt.Sprint(i-5), fmt.Sprint(cs[i-5]))
		}
	}
	close(stop)
	wg.Wait()
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopRun()
	n, _ := l.WindowSize()
	if s := l.Sampling(); n != int(s.Kept)+150 {
		t.Errorf("window holds %d rows; kept %d unlabeled and 150 labeled", n, s.Kept)
	}
	if _, err := l.Observe("after", time.Unix(9999, 0), xs[1], "1"); err != nil || !l.Contains("after") {
		t.Errorf("after Run, Observe inserts inline: err %v, in window %v", err, l.Contains("after"))
	}
}

// TestHandedOffRowsTriggerASolve checks that a row that lands in the
// window after a solve froze it counts toward the next solve: the solve
// that missed it must not leave the window marked unchanged.
func TestHandedOffRowsTriggerASolve(t *testing.T) {
	l := handoffLearner(t, 64, 0)
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 60, Dim: 4, Clusters: 2, Spread: 0.3, Seed: 4})
	observe(t, l, xs, 0, 40, classOf(cs)) // inline, before Run
	startRun(t, l)
	l.winMu.Lock() // the rows observed now cannot land yet
	observe(t, l, xs, 40, 60, unlabeled)
	frozen := make(chan struct{})
	go func() {
		defer close(frozen)
		l.mu.Lock() // what freeze does, without the window's lock
		l.changed, l.sinceExamples, l.sinceLabels = false, 0, 0
		l.mu.Unlock()
	}()
	<-frozen
	l.winMu.Unlock()
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err := l.Solve(context.Background())
	if err != nil {
		t.Fatalf("solve after the rows landed: %v (they must count as a change)", err)
	}
	if rep.Window != 60 {
		t.Errorf("the solve saw %d rows, want 60", rep.Window)
	}
}

// TestHandoffStopDropsTheQueue stops Run while the window is busy: the
// examples still queued, labeled or not, are forgotten instead of
// inserted, counted, and leave the window changed, so that a snapshot
// taken then does not claim its model was solved on the window a restart
// rebuilds (which holds them).
func TestHandoffStopDropsTheQueue(t *testing.T) {
	l := handoffLearner(t, 64, 0)
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 40, Dim: 4, Clusters: 2, Spread: 0.3, Seed: 5})
	observe(t, l, xs, 0, 20, classOf(cs)) // inline, before Run
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l.Changed() {
		t.Fatal("changed right after a solve")
	}
	took := make(chan int, 1)
	l.tookHook = func(rows int) {
		select {
		case took <- rows:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := startRunIn(t, ctx, l, nil)
	l.winMu.Lock() // the goroutine of Run cannot insert
	for i := 20; i < 40; i++ {
		label := ""
		if i%2 == 0 {
			label = fmt.Sprint(cs[i])
		}
		if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), xs[i], label); err != nil {
			t.Fatal(err)
		}
		if i == 20 {
			// Run takes this row and waits for the window; the
			// others stay in the queue.
			if rows := <-took; rows != 1 {
				t.Fatalf("Run took %d rows, want the first alone", rows)
			}
		}
	}
	cancel() // the stop, before Run can take the window
	l.winMu.Unlock()
	stop()
	// Run inserts the row it holds, then sees the stop before the queue.
	n, labeled := l.WindowSize()
	dropped := l.Sampling().Dropped
	if n != 21 || dropped != 19 {
		t.Fatalf("window %d rows and %d dropped at the stop; want 21 and 19", n, dropped)
	}
	known, knownLabeled := 0, 0
	for i := 20; i < 40; i++ {
		if l.Contains(fmt.Sprint(i)) {
			known++
			knownLabeled += 1 - i%2
		}
	}
	if known != n-20 || labeled != 20+knownLabeled {
		t.Errorf("the learner knows %d of the queued examples (%d labeled); the window holds %d of them (%d labeled)", known, knownLabeled, n-20, labeled-20)
	}
	if !l.Changed() {
		t.Error("the window counts as unchanged though queued rows were dropped")
	}
	if _, err := l.Observe("after", time.Unix(40, 0), xs[0], ""); err != nil || !l.Contains("after") {
		t.Errorf("after the stop, Observe inserts inline: err %v", err)
	}
}

// TestHandoffPause checks the pacing of inserts: a share s of the time
// means a pause of busy·(1 − s)/s, none without a share, at a share of 1,
// or when the queue is three quarters full (labeled examples would wait).
func TestHandoffPause(t *testing.T) {
	quarter := func() float64 { return 0.25 }
	paced := func(share func() float64) *handoff {
		return &handoff{queue: make(chan insertion, 8), share: share}
	}
	if got := paced(quarter).pause(10 * time.Millisecond); got != 30*time.Millisecond {
		t.Errorf("pause at a share of 1/4 after 10ms: %v, want 30ms", got)
	}
	if got := paced(nil).pause(10 * time.Millisecond); got != 0 {
		t.Errorf("pause without a share: %v", got)
	}
	if got := paced(func() float64 { return 1 }).pause(10 * time.Millisecond); got != 0 {
		t.Errorf("pause at a share of 1: %v", got)
	}
	h := paced(quarter)
	for range 6 {
		h.queue <- insertion{}
	}
	if got := h.pause(10 * time.Millisecond); got != 0 {
		t.Errorf("pause with the queue three quarters full: %v", got)
	}
}

// TestHandoffPacedRunInsertsEverything runs Run at a share of 1/10 while
// examples arrive: the inserts pause (the pauses are counted), and every
// example handed off still reaches the window.
func TestHandoffPacedRunInsertsEverything(t *testing.T) {
	l := handoffLearner(t, 4096, 0)
	startPacedRun(t, l, func() float64 { return 0.1 })
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: 600, Dim: 4, Clusters: 2, Spread: 0.3, Seed: 6})
	observe(t, l, xs, 0, len(xs), classOf(cs))
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.WindowSize(); n != len(xs) {
		t.Errorf("window holds %d of %d labeled examples", n, len(xs))
	}
	if l.Sampling().Paused == 0 {
		t.Error("no pause at a share of 1/10")
	}
}

// TestHandoffSignalsLandedDue: rows that land from the hand-off after the
// last Observe signal that a solve is due once enough of them did, so
// that the end of a burst is learned without waiting for another record.
// (Unlabeled rows: labels make a solve due when observed.)
func TestHandoffSignalsLandedDue(t *testing.T) {
	l, err := NewLearner(LearnerConfig{
		Features: 4, Window: anngraph.Config{MaxExamples: 5000, K: 5, Metric: anngraph.Euclidean},
		Params: train.Params{Algorithm: train.LapSVM, LambdaI: 1}, SolveExamples: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, l)
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: 60, Dim: 4, Clusters: 2, Seed: 8})
	l.winMu.Lock() // nothing lands while the burst is observed
	for i, x := range xs {
		if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), x, ""); err != nil {
			l.winMu.Unlock()
			t.Fatal(err)
		}
	}
	due := l.Due()
	signalled := false
	select {
	case <-l.LandedDue():
		signalled = true
	default:
	}
	l.winMu.Unlock()
	if due || signalled {
		t.Fatalf("before any row landed: due %v, signalled %v", due, signalled)
	}
	select {
	case <-l.LandedDue():
	case <-time.After(10 * time.Second):
		t.Fatal("no signal after the rows landed")
	}
	if !l.Due() {
		t.Error("signalled, but no solve is due")
	}
}

// TestHandoffPlainWindowIsNotPaced: without a kNN graph the inserts are
// never paused, whatever the share (30,000 inserts take well over a
// pacing quantum: paced at 1%, they would take seconds).
func TestHandoffPlainWindowIsNotPaced(t *testing.T) {
	l, err := NewLearner(LearnerConfig{Features: 4, Window: anngraph.Config{MaxExamples: 50000}, Params: train.Params{Algorithm: train.SVM}})
	if err != nil {
		t.Fatal(err)
	}
	startPacedRun(t, l, func() float64 { return 0.01 })
	xs, _ := synth.Clusters(synth.ClusterConfig{Points: 30000, Dim: 4, Clusters: 2, Seed: 9})
	observe(t, l, xs, 0, len(xs), func(int) string { return "a" })
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.WindowSize(); n != len(xs) || l.Sampling().Paused != 0 {
		t.Errorf("plain window: %d of %d rows, paused %v", n, len(xs), l.Sampling().Paused)
	}
}

// observe observes xs[from:to], row i under id i at time i seconds with
// label(i), and fails the test at the first error.
func observe(t *testing.T, l *Learner, xs []vector.Vector, from, to int, label func(i int) string) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := l.Observe(fmt.Sprint(i), time.Unix(int64(i), 0), xs[i], label(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// classOf labels row i with its cluster, cs[i].
func classOf(cs []int) func(int) string { return func(i int) string { return fmt.Sprint(cs[i]) } }

func unlabeled(int) string { return "" }
