package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/config"
	"streamer/ingest"
	"streamer/pipeline"
	"streamer/publish"
)

// Retry runs op until it succeeds or ctx ends, and returns its error only
// then: the service's retry of Kafka operations, which backs off, counts
// the failures and reports the last one on /readyz.
type Retry func(ctx context.Context, what string, op func() error) error

// A Consumer reads the input topics into the pipeline: in kafka.group
// (Group), or every partition by direct assignment (Assigned). Every field
// is required but Predict and NewGeneration; a Consumer is used by one
// reading at a time, beside its liveness watch.
type Consumer struct {
	Config   config.Config
	Conn     *brokers.Connection
	Pipeline *pipeline.Pipeline
	Backlog  *Backlog
	Metrics  *Metrics
	Status   *Status
	Log      *slog.Logger
	Retry    Retry
	// Topics are the topics read in kafka.group.
	Topics []string
	// Predict makes the prediction of a consumed example; nil scores it
	// and learns from it (pipeline.Example).
	Predict func(ingest.Example, pipeline.Source) (pipeline.Prediction, error)
	// NewGeneration, when set, is called on the consumer's goroutine
	// before the first record of each new group generation.
	NewGeneration func()
	// Predictions is the encoding of the predictions; the zero value is
	// JSON.
	Predictions publish.Format
}

// Status is what the consumers tell the rest of the service at any time.
// Its zero value is ready for use.
type Status struct {
	assigned    atomic.Bool
	deadLetters atomic.Int64
	stall       atomic.Value // string
	registry    atomic.Value // string
}

// Assigned reports whether the consumer has had input partitions
// assigned.
func (s *Status) Assigned() bool { return s.assigned.Load() }

// DeadLetters returns the records routed to a dead-letter topic.
func (s *Status) DeadLetters() int64 { return s.deadLetters.Load() }

// Stall says why the input is stalled (WatchLiveness), "" when it is not.
func (s *Status) Stall() string {
	r, _ := s.stall.Load().(string)
	return r
}

// Registry says why the consumer waits for the schema registry (a record
// whose schema it cannot fetch), "" when it does not.
func (s *Status) Registry() string {
	r, _ := s.registry.Load().(string)
	return r
}

// partitionKey names one input partition.
type partitionKey struct {
	topic     string
	partition int
}

func (k partitionKey) String() string { return fmt.Sprintf("%s[%d]", k.topic, k.partition) }

// sleep waits d, and reports false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// decodeRecord decodes a record of the examples or the labels topic. A
// record whose schema cannot be fetched from the schema registry is
// neither refused nor passed over: it waits, and is decoded again after
// kafka.retry_backoff, doubling up to 30s, while Status.Registry (so
// /readyz) and the metrics say so. It reports false when ctx ended first:
// the record is left to be read again.
func (c *Consumer) decodeRecord(ctx context.Context, m kafka.Message) (record, bool) {
	backoff := c.Config.Kafka.RetryBackoff
	for waited := false; ; waited = true {
		rec := c.decode(ctx, m)
		if !errors.Is(rec.err, ingest.ErrSchemaUnavailable) {
			if waited {
				c.Status.registry.Store("")
				c.Metrics.RegistryWaiting.Set(0)
				c.Log.Info("schema registry answers again", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset)
			}
			return rec, true
		}
		if ctx.Err() != nil {
			return rec, false
		}
		c.Status.registry.Store("waiting for the schema registry: " + rec.err.Error())
		c.Metrics.RegistryWaiting.Set(1)
		c.Metrics.RegistryRetries.Inc()
		c.Log.Warn("schema registry unavailable; the record waits", "topic", m.Topic, "partition", m.Partition,
			"offset", m.Offset, "error", rec.err, "backoff", backoff.String())
		if !sleep(ctx, backoff) {
			return rec, false
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// predict makes the prediction of a consumed example.
func (c *Consumer) predict(ex ingest.Example, src pipeline.Source) (pipeline.Prediction, error) {
	if c.Predict != nil {
		return c.Predict(ex, src)
	}
	return c.Pipeline.Example(ex, src)
}

// deadLetter queues the dead letter of m with the reason of err.
func (c *Consumer) deadLetter(b *batch, topic, kind string, m *kafka.Message, err error) {
	reason := pipeline.RefusalReason(err)
	c.Metrics.DeadLetters.WithLabelValues(kind, reason).Inc()
	c.Status.deadLetters.Add(1)
	c.Log.Warn("dead letter", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "reason", reason, "error", err)
	b.out = append(b.out, publish.DeadLetter(topic, *m, reason, err))
}

// closeAll closes readers, each under close_timeout: kafka-go's
// Reader.Close can hang on a broker that went away.
func (c *Consumer) closeAll(closers ...interface{ Close() error }) {
	for _, cl := range closers {
		if err := brokers.CloseWithin(cl, c.Config.Kafka.CloseTimeout); err != nil && !errors.Is(err, context.Canceled) {
			c.Log.Warn("close", "error", err)
		}
	}
}
