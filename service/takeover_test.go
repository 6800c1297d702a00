package service

import (
	"context"
	"fmt"
	"testing"
	"time"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/internal/testlevel"
)

// TestAccuracyAfterLearnerKill runs the same stream twice, each on a
// cluster of its own with a learner, a standby and a scorer as processes:
// once with the active learner SIGKILLed once a quarter of the stream is
// written (the standby takes over from the newest snapshot; the scorer
// keeps the last model meanwhile), once uninterrupted. Past the first
// eighth of the stream, the prequential accuracy of the scorer's first
// predictions on the revealed labels must stay within one point of the
// uninterrupted run's.
//
// The kill comes after the warm-up: a kill at the learner's second
// snapshot froze a young model for the takeover (session timeout 6s; the
// standby leads about 7.7s after a kill), and the second and third eighths
// scored 0.75 and 0.84 against 1.00: 0.937 against 0.994 over the stream.
// That is the cost of a takeover while the model still improves fast, not
// of a lost state.
func TestAccuracyAfterLearnerKill(t *testing.T) {
	testlevel.Long(t, "the takeover accuracy test runs real processes; it runs without -short")
	bin := buildStreamer(t)
	const n, rate = 8000, 400
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	withinAPointOfCalm(t, "a learner kill", func(kill bool) (float64, error) { return runTakeover(t, ctx, bin, n, rate, kill) })
}

// runTakeover streams n examples at rate on a cluster of its own to a
// learner, a standby and a scorer, SIGKILLs the active learner once a
// quarter of the stream is written when kill is set, and returns the prequential accuracy
// of the first predictions after the first eighth of the stream. It runs
// in a goroutine of its own: it returns errors rather than failing the
// test; its processes are killed when the test ends.
func runTakeover(t *testing.T, ctx context.Context, bin string, n, rate int, kill bool) (float64, error) {
	cluster, err := embedded.Start(embedded.Config{Partitions: 4})
	if err != nil {
		return 0, err
	}
	defer cluster.Close()
	addr := cluster.Addrs()[0]
	conn, err := (brokers.Config{Brokers: []string{addr}}).Connect([]string{addr})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if err := conn.EnsureTopics(ctx, brokers.Topic{Name: "examples", Partitions: 4}, brokers.Topic{Name: "labels", Partitions: 4}); err != nil {
		return 0, err
	}
	dir := t.TempDir()
	started := 0
	start := func(role string) (*process, error) {
		started++
		return startProcess(t, bin, addr, dir, started, "role="+role, "kafka.partitions=4", "log.level=info")
	}
	wait := func(p *process, msg string) error {
		if err := poll(ctx, time.Minute, func() bool { return len(p.events(msg)) > 0 }); err != nil {
			return fmt.Errorf("kill=%v: %q in %s: %w\n%s", kill, msg, p.log, err, p.tail(20))
		}
		return nil
	}
	active, err := start(config.RoleLearner)
	if err != nil {
		return 0, err
	}
	if err := wait(active, "learner leading"); err != nil {
		return 0, err
	}
	standby, err := start(config.RoleLearner)
	if err != nil {
		return 0, err
	}
	if err := wait(standby, "lease standby"); err != nil {
		return 0, err
	}
	if _, err := start(config.RoleScorer); err != nil {
		return 0, err
	}

	produced, stopProducing := produceInBackground(ctx, t, addr, n, rate)
	defer stopProducing()
	if kill {
		err := poll(ctx, time.Minute, func() bool { return written(ctx, conn) >= n/4 && len(active.events("snapshot published")) > 0 })
		if err != nil {
			return 0, fmt.Errorf("a quarter of the stream and a snapshot: %w\n%s", err, active.tail(20))
		}
		active.kill()
		killed := time.Now()
		if err := wait(standby, "learner leading"); err != nil {
			return 0, err
		}
		if err := wait(standby, "snapshot published"); err != nil {
			return 0, err
		}
		t.Logf("learner killed at example %d; the standby led %v and published %v after the kill", n/4,
			standby.events("learner leading")[0].Time.Sub(killed).Round(time.Millisecond),
			standby.events("snapshot published")[0].Time.Sub(killed).Round(time.Millisecond))
	}
	res := <-produced
	if len(res.ids) != n {
		return 0, fmt.Errorf("kill=%v: %d examples produced of %d", kill, len(res.ids), n)
	}
	first, err := firstPredictions(t, ctx, addr, res.ids)
	if err != nil {
		return 0, fmt.Errorf("kill=%v: %w", kill, err)
	}
	t.Logf("kill=%v: accuracy by eighth of the stream: %s", kill, accuracyByEighth(first, res.revealed, res.ids))
	return res.accuracyAfterWarmUp(first), nil
}

// written returns the number of records on the examples topic, 0 when it
// cannot tell.
func written(ctx context.Context, conn *brokers.Connection) int {
	parts, err := conn.Partitions(ctx, "examples")
	if err != nil {
		return 0
	}
	ranges, err := conn.Offsets(ctx, "examples", parts)
	if err != nil {
		return 0
	}
	sum := 0
	for _, r := range ranges {
		sum += int(r.End - r.First)
	}
	return sum
}
