package servicebench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/brokerstest"
	"streamer/pipeline"
	"streamer/synth"
)

// rollingSettle is how long the stream flows to the scorers before the
// first restart and after the last one.
const rollingSettle = 2 * time.Second

// rollingRestart starts cfg.RollingScorers scorers in a group of their own,
// waits until they have caught up on the filled topic, then streams
// examples at cfg.RollingRate while it restarts them one by one: SIGTERM,
// then a new scorer, which must be ready and in the stable group before
// the next goes. It counts the group's rebalances over the restarts and
// the longest pause in the predictions of an input partition from the
// first SIGTERM until the stream ends.
func rollingRestart(ctx context.Context, cfg ScaleConfig, sets []string, conn *brokers.Connection, examples, predictions string) (Rolling, error) {
	n := cfg.RollingScorers
	rep := Rolling{Scorers: n, Rate: cfg.RollingRate}
	const group = "scale-rolling"
	sets = append(sets, "role=scorer", "kafka.group="+group)
	var children []*child
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	for range n {
		c, err := startChild(cfg.Executable, sets)
		if err != nil {
			return rep, err
		}
		children = append(children, c)
	}
	if err := waitCommitted(ctx, conn, group, []string{examples}, cfg.Timeout); err != nil {
		return rep, fmt.Errorf("rolling restart: the filled topic: %w", err)
	}

	watchCtx, stopWatch := context.WithCancel(ctx)
	watch := brokerstest.WatchGroup(conn.Client(), group, 25*time.Millisecond)
	streamCtx, stopStream := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var streamErr error
	wg.Go(func() { watch.Run(watchCtx) })
	wg.Go(func() { streamErr = streamExamples(streamCtx, conn, examples, cfg.RollingRate) })
	defer func() { stopStream(); stopWatch(); wg.Wait() }()
	if err := pollUntil(ctx, cfg.Timeout, func() bool { return watch.StableWith(n) }, "the rolling group stable"); err != nil {
		return rep, err
	}
	if !sleepCtx(ctx, rollingSettle) {
		return rep, ctx.Err()
	}

	before, began := watch.Rebalances(), time.Now()
	for i := range children {
		if err := restartScorer(ctx, cfg, sets, children, i, watch); err != nil {
			return rep, fmt.Errorf("rolling restart of scorer %d: %w", i, err)
		}
	}
	rep.Seconds = time.Since(began).Round(time.Millisecond).Seconds()
	rep.Rebalances = watch.Rebalances() - before
	if !sleepCtx(ctx, rollingSettle) {
		return rep, ctx.Err()
	}
	stopStream()
	stopWatch()
	wg.Wait()
	if streamErr != nil {
		return rep, streamErr
	}
	if err := waitCommitted(ctx, conn, group, []string{examples}, cfg.Timeout); err != nil {
		return rep, fmt.Errorf("rolling restart: the stream's end: %w", err)
	}
	pause, err := brokerstest.LongestPause(ctx, conn, predictions, began, predictionSource)
	if err != nil {
		return rep, err
	}
	rep.LongestPauseSeconds = pause.Duration.Round(time.Millisecond).Seconds()
	return rep, nil
}

// restartScorer stops children[i] (SIGTERM, and waits for its exit), then
// starts another in its place and waits until it is ready and the group
// is stable with all of them again.
func restartScorer(ctx context.Context, cfg ScaleConfig, sets []string, children []*child, i int, watch *brokerstest.GroupWatch) error {
	if err := children[i].stop(); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	next, err := startChild(cfg.Executable, sets)
	if err != nil {
		return err
	}
	children[i] = next
	if err := next.waitReady(ctx, cfg.Timeout); err != nil {
		return err
	}
	return pollUntil(ctx, cfg.Timeout, func() bool { return watch.StableWith(len(children)) }, "the group stable again")
}

// streamExamples writes generated examples to topic at rate per second,
// in batches every 10 ms, until ctx ends; an error ends it early.
func streamExamples(ctx context.Context, conn *brokers.Connection, topic string, rate int) error {
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: topic, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 17})
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	per := max(1, rate/100)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		msgs := make([]kafka.Message, per)
		for i := range msgs {
			d := gen.Next()
			id := "rolling-" + d.ID
			v, _ := json.Marshal(map[string]string{"id": id, "text": d.Text})
			msgs[i] = kafka.Message{Key: []byte(id), Value: v}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil && ctx.Err() == nil {
			return fmt.Errorf("stream examples: %w", err)
		}
	}
}

// predictionSource returns the input partition of a prediction record.
func predictionSource(m kafka.Message) (int, error) {
	var p pipeline.Prediction
	if err := json.Unmarshal(m.Value, &p); err != nil {
		return 0, fmt.Errorf("prediction at offset %d: %w", m.Offset, err)
	}
	return p.Source.Partition, nil
}
