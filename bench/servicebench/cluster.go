package servicebench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
)

// benchCluster is an embedded broker with the configuration of the
// service that a harness points at it, and a connection of its own.
type benchCluster struct {
	cluster *embedded.Cluster
	conn    *brokers.Connection
	config  config.Config
	// sets are the --set flags that point a child service at the cluster.
	sets []string
}

// startBenchCluster starts an embedded broker of the given partitions,
// loads the service's configuration from sets (the broker's address,
// warn-level logs and the partitions first, then extra), so that a bad
// --set is refused before anything runs, and creates the input topics
// with the partitions the service expects.
func startBenchCluster(ctx context.Context, partitions int, extra []string) (*benchCluster, error) {
	cluster, err := embedded.Start(embedded.Config{Partitions: partitions})
	if err != nil {
		return nil, fmt.Errorf("start the embedded broker: %w", err)
	}
	bc := &benchCluster{cluster: cluster}
	bc.sets = slices.Clip(append([]string{"kafka.brokers=" + cluster.Addrs()[0],
		"log.level=warn", "kafka.partitions=" + strconv.Itoa(partitions)}, extra...))
	if bc.config, err = config.Load("", bc.sets); err != nil {
		cluster.Close()
		return nil, err
	}
	if bc.conn, err = bc.config.Brokers().Connect(cluster.Addrs()); err != nil {
		cluster.Close()
		return nil, fmt.Errorf("connect to the embedded broker: %w", err)
	}
	topics, n := bc.config.Kafka.Topics, bc.config.Kafka.Partitions
	if err := bc.conn.EnsureTopics(ctx, brokers.Topic{Name: topics.Examples, Partitions: n},
		brokers.Topic{Name: topics.Labels, Partitions: n}); err != nil {
		bc.Close()
		return nil, fmt.Errorf("create the input topics: %w", err)
	}
	return bc, nil
}

// fillCluster starts a benchCluster and fills its input topics as
// fillDrain does with fill.
func fillCluster(ctx context.Context, partitions int, extra []string, fill DrainConfig) (*benchCluster, error) {
	bc, err := startBenchCluster(ctx, partitions, extra)
	if err != nil {
		return nil, err
	}
	topics := bc.config.Kafka.Topics
	if err := fillDrain(ctx, bc.conn, fill, topics.Examples, topics.Labels); err != nil {
		bc.Close()
		return nil, err
	}
	return bc, nil
}

// Close closes the connection and stops the broker.
func (bc *benchCluster) Close() {
	bc.conn.Close()
	bc.cluster.Close()
}

// waitCommitted polls until group has committed the end of every partition
// of topics, one of children exits, or timeout passes.
func waitCommitted(ctx context.Context, conn *brokers.Connection, group string, topics []string, timeout time.Duration, children ...*child) error {
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	behind := int64(-1) // unknown until the first positions are read
	for {
		n, err := uncommitted(ctx, conn, group, topics)
		if err == nil && n == 0 {
			return nil
		}
		if err == nil {
			behind = n
		}
		// A read the deadline cut short is the timeout, whichever of the
		// connection's deadline and the context's timer fired first.
		if err != nil && ctx.Err() == nil && time.Now().Before(deadline) {
			return err
		}
		if slices.ContainsFunc(children, (*child).hasExited) {
			return errors.New("service exited before the drain ended")
		}
		select {
		case <-ctx.Done():
			if behind < 0 {
				return fmt.Errorf("drain: positions not read within %v: %w", timeout, ctx.Err())
			}
			return fmt.Errorf("drain: %d records not committed after %v: %w", behind, timeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// uncommitted returns the records of topics that group has not committed,
// over the partitions that hold any.
func uncommitted(ctx context.Context, conn *brokers.Connection, group string, topics []string) (int64, error) {
	var n int64
	for _, t := range topics {
		ps, err := conn.Positions(ctx, group, t)
		if err != nil {
			return 0, err
		}
		for _, p := range ps {
			if p.End > p.First && p.Committed < p.End {
				n += p.End - max(p.Committed, p.First)
			}
		}
	}
	return n, nil
}

// publishTimes is the package's publishTimes over the service's
// predictions topic, read through a connection of its own: kafka-go's
// transport caches metadata from before the service created the topic.
func (bc *benchCluster) publishTimes(ctx context.Context, start time.Time) ([]float64, error) {
	out, err := bc.config.Brokers().Connect(bc.cluster.Addrs())
	if err != nil {
		return nil, fmt.Errorf("connect to read the predictions: %w", err)
	}
	defer out.Close()
	return publishTimes(ctx, out, bc.config.Kafka.Topics.Predictions, start)
}

// publishTimes reads the predictions topic and returns, per example (its
// first prediction, should one be published twice), the time from start to
// the prediction's Kafka timestamp, in milliseconds, sorted.
func publishTimes(ctx context.Context, conn *brokers.Connection, topic string, start time.Time) ([]float64, error) {
	parts, err := conn.Partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	ranges, err := conn.Offsets(ctx, topic, parts)
	if err != nil {
		return nil, err
	}
	first := map[string]time.Time{}
	for _, p := range parts {
		r := ranges[p]
		err := conn.ReadRange(ctx, topic, p, r.First, r.End, func(m kafka.Message) error {
			if t, ok := first[string(m.Key)]; !ok || m.Time.Before(t) {
				first[string(m.Key)] = m.Time
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]float64, 0, len(first))
	for _, t := range first {
		out = append(out, float64(t.Sub(start))/float64(time.Millisecond))
	}
	slices.Sort(out)
	return out, nil
}

// trimEvery is how often trim drops what the service has read.
const trimEvery = time.Second

// trim does, until ctx ends, what a broker's retention would: every
// trimEvery it deletes the input records below the service's committed
// offsets and every prediction published, which nobody reads here. The
// embedded broker keeps its records in this process's memory, so without
// it that memory grows with every record produced. A failed round is
// tried again at the next.
func (bc *benchCluster) trim(ctx context.Context) {
	tick := time.NewTicker(trimEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		bc.trimOnce(ctx)
	}
}

// trimOnce deletes what trim deletes, once; it stops at the first error.
func (bc *benchCluster) trimOnce(ctx context.Context) error {
	topics, group := bc.config.Kafka.Topics, bc.config.Kafka.Group
	for _, topic := range []string{topics.Examples, topics.Labels} {
		ps, err := bc.conn.Positions(ctx, group, topic)
		if err != nil {
			return fmt.Errorf("trim %s: %w", topic, err)
		}
		for _, p := range ps {
			if p.Committed <= p.First {
				continue
			}
			if err := bc.cluster.DeleteRecords(topic, int32(p.Partition), p.Committed); err != nil {
				return fmt.Errorf("trim %s/%d to %d: %w", topic, p.Partition, p.Committed, err)
			}
		}
	}
	// From the cluster itself: the connection's transport caches metadata
	// from before the service created the topic.
	for _, pi := range bc.cluster.PartitionInfos(topics.Predictions) {
		if err := bc.cluster.DeleteRecords(topics.Predictions, pi.Partition, -1); err != nil {
			return fmt.Errorf("trim %s/%d: %w", topics.Predictions, pi.Partition, err)
		}
	}
	return nil
}
