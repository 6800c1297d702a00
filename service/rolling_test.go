package service

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"streamer/brokers/brokerstest"
	"streamer/config"
	"streamer/internal/testlevel"
)

// TestRollingRestartOfScorers restarts three scorer processes one by one
// (SIGTERM, then a new one, which must be in the group before the next
// goes) while examples stream in and a learner publishes models. Nothing
// may be lost: every example gets a prediction. The rebalances the group
// went through and the longest pause in the output of an input partition
// are figures for the log, not assertions.
func TestRollingRestartOfScorers(t *testing.T) {
	testlevel.Long(t, "the rolling restart runs real processes; it runs without -short")
	rate := scaleRate(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	so, conn := startScaleOut(t, ctx)
	addr := so.addr
	const group = "rolling"
	learner := so.start(config.RoleLearner, "kafka.group="+group)
	so.waitEvent(ctx, learner, "learner leading", time.Minute)
	var scorers []*process
	for range 3 {
		scorers = append(scorers, so.start(config.RoleScorer, "kafka.group="+group))
	}

	stop := make(chan struct{})
	var ids []string
	var produceErr error
	var running sync.WaitGroup
	running.Go(func() { ids, produceErr = produceUntil(ctx, addr, rate, stop) })
	watchCtx, stopWatch := context.WithCancel(ctx)
	watch := brokerstest.WatchGroup(conn.Client(), group, 25*time.Millisecond)
	running.Go(func() { watch.Run(watchCtx) })
	defer func() {
		stopWatch()
		closeOnce(stop)
		running.Wait()
	}()
	for _, s := range scorers {
		so.waitEvent(ctx, s, "consuming", 2*time.Minute)
	}
	waitFor(t, "the group stable with three scorers", time.Minute, func() bool { return watch.StableWith(3) })

	before := watch.Rebalances()
	began := time.Now()
	for i, s := range scorers {
		if !s.signal(syscall.SIGTERM, 30*time.Second) {
			t.Fatalf("scorer %d did not stop within 30s of SIGTERM\n%s", i, s.tail(20))
		}
		if s.err != nil {
			t.Errorf("scorer %d exited with %v\n%s", i, s.err, s.tail(20))
		}
		next := so.start(config.RoleScorer, "kafka.group="+group)
		so.waitEvent(ctx, next, "consuming", time.Minute)
		waitFor(t, "the group stable with three scorers again", time.Minute, func() bool { return watch.StableWith(3) })
		scorers[i] = next
	}
	restarted := time.Now()
	rebalances := watch.Rebalances() - before

	// Stream a little more with the new scorers, then check.
	time.Sleep(2 * time.Second)
	closeOnce(stop)
	stopWatch()
	running.Wait()
	if produceErr != nil {
		t.Fatal(produceErr)
	}
	got, err := firstPredictions(t, ctx, addr, ids)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d examples, %d with a prediction", len(ids), len(got))
	gap, part, at := longestOutputGap(t, ctx, conn)
	t.Logf("rolling restart of 3 scorers in %v: %d rebalances; longest pause in the predictions of an input partition %v (examples[%d], %v into the restart)",
		restarted.Sub(began).Round(time.Millisecond), rebalances, gap.Round(time.Millisecond), part, at.Sub(began).Round(time.Millisecond))
}

// closeOnce closes c unless it is closed.
func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}
