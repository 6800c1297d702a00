package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/pipeline"
)

// Start says where a consumer by direct assignment reads a partition
// from, given the offsets the brokers hold of it.
type Start func(topic string, partition int, r brokers.OffsetRange) int64

// Assigned reads every partition of the examples and labels topics by
// direct assignment, each from where start says, and hands the records to
// the pipeline in order per partition, until ctx ends; it publishes no
// prediction (only the dead letters of labels) and commits nothing. It
// calls opened with the number of partitions once it has opened the
// first readers, and looks for new partitions (a topic created,
// partitions added) every partitionWatchInterval.
func (c *Consumer) Assigned(ctx context.Context, writer *kafka.Writer, trigger chan<- struct{}, start Start, opened func(partitions int)) {
	records := make(chan kafka.Message, 256)
	fetchCtx, stopFetching := context.WithCancel(ctx)
	readers := map[partitionKey]*kafka.Reader{}
	var wg sync.WaitGroup
	defer func() {
		stopFetching()
		wg.Wait()
		for _, r := range readers {
			c.closeAll(r)
		}
	}()
	open := func() {
		for _, r := range c.openNewPartitions(ctx, readers, start) {
			wg.Go(func() { c.fetchInto(fetchCtx, r, records) })
		}
	}
	open()
	c.Status.assigned.Store(true)
	opened(len(readers))
	watch := time.NewTicker(partitionWatchInterval)
	defer watch.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-watch.C:
			open()
		case m := <-records:
			c.learnRecord(ctx, m, writer)
			if c.Pipeline.Due() {
				select {
				case trigger <- struct{}{}:
				default:
				}
			}
		}
	}
}

// partitionWatchInterval is how often a learner looks for input
// partitions it does not read yet.
const partitionWatchInterval = 2 * time.Second

// openNewPartitions opens a reader of each input partition that readers
// lacks, where start says, adds it there and returns the new ones. A
// topic that does not exist yet has no partitions.
func (c *Consumer) openNewPartitions(ctx context.Context, readers map[partitionKey]*kafka.Reader, start Start) []*kafka.Reader {
	var out []*kafka.Reader
	for _, topic := range []string{c.Config.Kafka.Topics.Examples, c.Config.Kafka.Topics.Labels} {
		parts, err := c.Conn.Partitions(ctx, topic)
		if errors.Is(err, brokers.ErrUnknownTopic) || ctx.Err() != nil {
			continue
		}
		var ranges map[int]brokers.OffsetRange
		if err == nil {
			ranges, err = c.Conn.Offsets(ctx, topic, parts)
		}
		if err != nil {
			c.Metrics.Retries.WithLabelValues("partitions").Inc()
			c.Log.Warn("input partitions not listed; trying again", "topic", topic, "error", c.Conn.Explain(ctx, err))
			continue
		}
		for _, p := range parts {
			key := partitionKey{topic, p}
			if readers[key] != nil {
				continue
			}
			from := start(topic, p, ranges[p])
			r, err := c.partitionReader(key, from)
			if err != nil {
				c.Log.Warn("input partition not opened; trying again", "topic", topic, "partition", p, "error", err)
				continue
			}
			c.Backlog.Expect(topic, p, from, ranges[p].End)
			readers[key] = r
			out = append(out, r)
		}
	}
	return out
}

// partitionReader returns a reader of one partition at offset start.
func (c *Consumer) partitionReader(key partitionKey, start int64) (*kafka.Reader, error) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.Conn.Addrs, Dialer: c.Conn.Dialer, Topic: key.topic, Partition: key.partition,
		MinBytes: 1, MaxBytes: max(2*c.Config.Limits.MaxMessageBytes, 1<<20), MaxWait: brokers.FetchMaxWait,
		QueueCapacity: 100, ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: 2 * time.Second,
		ErrorLogger: ReaderErrorLogger(c.Log),
	})
	if err := r.SetOffset(start); err != nil {
		r.Close()
		return nil, fmt.Errorf("%v at %d: %w", key, start, err)
	}
	return r, nil
}

// fetchInto sends the records of one partition reader to out until ctx
// ends.
func (c *Consumer) fetchInto(ctx context.Context, r *kafka.Reader, out chan<- kafka.Message) {
	for {
		m, err := r.FetchMessage(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			c.Metrics.Retries.WithLabelValues("fetch").Inc()
			c.Log.Warn("fetch failed; retrying", "topic", r.Config().Topic, "partition", r.Config().Partition, "error", err)
			sleep(ctx, c.Config.Kafka.RetryBackoff)
			continue
		}
		select {
		case out <- m:
		case <-ctx.Done():
			return
		}
	}
}

// learnRecord runs one record through the pipeline. Its prediction is
// scored prequentially and not published (the scorers publish theirs);
// bad examples are the scorers' dead letters, bad labels the learner's,
// which alone reads the labels.
func (c *Consumer) learnRecord(ctx context.Context, m kafka.Message, writer *kafka.Writer) {
	c.Metrics.Consumed.WithLabelValues(m.Topic).Inc()
	rec, ok := c.decodeRecord(ctx, m)
	if !ok {
		return
	}
	c.Backlog.Read(&m)
	src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
	t := c.Config.Kafka.Topics
	if m.Topic == t.Examples {
		err := rec.err
		if err == nil {
			_, err = c.Pipeline.Example(rec.ex, src)
		}
		if err != nil {
			c.Pipeline.ExampleRefused(src)
			c.Log.Debug("example not learned", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "error", err)
		}
		return
	}
	if rec.err == nil {
		c.Pipeline.Label(rec.label, src)
		return
	}
	c.Pipeline.LabelRefused(src)
	var b batch
	c.deadLetter(&b, t.LabelsDLQ, "labels", &m, rec.err)
	if err := c.Retry(ctx, "write", func() error { return writer.WriteMessages(ctx, b.out...) }); err != nil && ctx.Err() == nil {
		c.Log.Error("dead letter not written", "error", err)
	}
}
