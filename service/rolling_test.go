package service

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"streamer/brokers/brokerstest"
)

// groupWatch polls a consumer group's state on the broker and counts the
// rebalances it sees: the times the group leaves the Stable state.
type groupWatch struct {
	mu         sync.Mutex
	state      string
	members    int
	rebalances int
}

// watch polls the group every 25ms until ctx ends.
func (g *groupWatch) watch(ctx context.Context, addr, group string) {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		state, members, err := brokerstest.GroupState(ctx, addr, group)
		if err != nil {
			continue
		}
		g.mu.Lock()
		if g.state == "Stable" && state != "Stable" {
			g.rebalances++
		}
		g.state, g.members = state, len(members)
		g.mu.Unlock()
	}
}

// stableWith reports whether the group was last seen stable with n
// members.
func (g *groupWatch) stableWith(n int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state == "Stable" && g.members == n
}

func (g *groupWatch) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rebalances
}

// TestRollingRestartOfScorers restarts three scorer processes one by one
// (SIGTERM, then a new one, which must be in the group before the next
// goes) while examples stream in and a learner publishes models. Nothing
// may be lost: every example gets a prediction. The rebalances the group
// went through and the longest pause in the output of an input partition
// are figures for the log, not assertions.
func TestRollingRestartOfScorers(t *testing.T) {
	if testing.Short() {
		t.Skip("the rolling restart runs real processes; it runs without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	so, conn := startScaleOut(t, ctx)
	addr := so.addr
	const group = "rolling"
	learner := so.start(RoleLearner, "kafka.group="+group)
	so.waitEvent(ctx, learner, "learner leading", time.Minute)
	var scorers []*process
	for range 3 {
		scorers = append(scorers, so.start(RoleScorer, "kafka.group="+group))
	}

	stop := make(chan struct{})
	var ids []string
	var produceErr error
	var running sync.WaitGroup
	running.Go(func() { ids, produceErr = produceUntil(ctx, addr, scaleRate(t), stop) })
	watchCtx, stopWatch := context.WithCancel(ctx)
	watch := &groupWatch{}
	running.Go(func() { watch.watch(watchCtx, addr, group) })
	defer func() {
		stopWatch()
		closeOnce(stop)
		running.Wait()
	}()
	for _, s := range scorers {
		so.waitEvent(ctx, s, "consuming", 2*time.Minute)
	}
	waitFor(t, "the group stable with three scorers", time.Minute, func() bool { return watch.stableWith(3) })

	before := watch.count()
	began := time.Now()
	for i, s := range scorers {
		if !s.signal(syscall.SIGTERM, 30*time.Second) {
			t.Fatalf("scorer %d did not stop within 30s of SIGTERM\n%s", i, s.tail(20))
		}
		if s.err != nil {
			t.Errorf("scorer %d exited with %v\n%s", i, s.err, s.tail(20))
		}
		next := so.start(RoleScorer, "kafka.group="+group)
		so.waitEvent(ctx, next, "consuming", time.Minute)
		waitFor(t, "the group stable with three scorers again", time.Minute, func() bool { return watch.stableWith(3) })
		scorers[i] = next
	}
	restarted := time.Now()
	rebalances := watch.count() - before

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
