package publish

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/pipeline"
	"streamer/snapshot"
)

// WriterConfig sets up the writers. Its zero fields mean the defaults beside
// them.
type WriterConfig struct {
	// BatchTimeout is how long a partial batch waits; 0 means 5ms (kafka-go
	// waits 1s by default, a trap for a latency-bound service).
	BatchTimeout time.Duration
	// BatchSize is the most records of a batch; 0 means 500.
	BatchSize int
	// MaxMessageBytes is the largest record value written; snapshots are
	// chunked to fit. 0 means 900,000.
	MaxMessageBytes int
}

func (c WriterConfig) withDefaults() WriterConfig {
	if c.BatchTimeout <= 0 {
		c.BatchTimeout = 5 * time.Millisecond
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 500
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 900_000
	}
	return c
}

// NewRecordWriter returns the writer of predictions and dead letters: every
// record names its topic; a record's key picks its partition, so every
// prediction of an example (a redelivery's too) lands on one partition. All
// in-sync replicas acknowledge each batch.
func NewRecordWriter(conn *brokers.Connection, cfg WriterConfig) *kafka.Writer {
	cfg = cfg.withDefaults()
	return &kafka.Writer{
		Addr:         kafka.TCP(conn.Addrs...),
		Transport:    conn.Transport,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: cfg.BatchTimeout,
		BatchSize:    cfg.BatchSize,
		BatchBytes:   int64(4 * cfg.MaxMessageBytes),
		MaxAttempts:  3,
	}
}

// PredictionRecord returns the record of a prediction, keyed by example id.
func PredictionRecord(topic string, p *pipeline.Prediction) (kafka.Message, error) {
	value, err := p.Marshal()
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encode prediction %q: %w", p.ID, err)
	}
	return kafka.Message{Topic: topic, Key: []byte(p.ID), Value: value}, nil
}

// Dead-letter headers.
const (
	HeaderReason          = "dlq-reason"
	HeaderError           = "dlq-error"
	HeaderSourceTopic     = "dlq-source-topic"
	HeaderSourcePartition = "dlq-source-partition"
	HeaderSourceOffset    = "dlq-source-offset"
)

// DeadLetter returns the dead-letter record of a record that could not be
// used: the original key and bytes, with the reason and where it came from
// in headers.
func DeadLetter(topic string, src kafka.Message, reason string, cause error) kafka.Message {
	msg := cause.Error()
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	return kafka.Message{
		Topic: topic,
		Key:   src.Key,
		Value: src.Value,
		Headers: []kafka.Header{
			{Key: HeaderReason, Value: []byte(reason)},
			{Key: HeaderError, Value: []byte(msg)},
			{Key: HeaderSourceTopic, Value: []byte(src.Topic)},
			{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(src.Partition))},
			{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(src.Offset, 10))},
		},
	}
}

// SnapshotWriter publishes snapshots to a compacted topic, chunked to fit
// the broker's message limit, all on partition 0 so that a reader sees a
// snapshot's chunks before its manifest.
type SnapshotWriter struct {
	w        *kafka.Writer
	maxValue int
}

// NewSnapshotWriter returns a writer of snapshots to topic.
func NewSnapshotWriter(conn *brokers.Connection, topic string, cfg WriterConfig) *SnapshotWriter {
	cfg = cfg.withDefaults()
	return &SnapshotWriter{
		w: &kafka.Writer{
			Addr:         kafka.TCP(conn.Addrs...),
			Transport:    conn.Transport,
			Topic:        topic,
			Balancer:     kafka.BalancerFunc(func(kafka.Message, ...int) int { return 0 }),
			RequiredAcks: kafka.RequireAll,
			BatchTimeout: time.Millisecond,
			BatchSize:    1,
			BatchBytes:   int64(2 * cfg.MaxMessageBytes),
			MaxAttempts:  5,
		},
		maxValue: cfg.MaxMessageBytes,
	}
}

// Publish writes an encoded snapshot of model name stamped st: its chunks
// in order, then its manifest.
func (s *SnapshotWriter) Publish(ctx context.Context, name string, st snapshot.Stamp, data []byte) error {
	for _, r := range snapshot.Split(name, st, data, s.maxValue) {
		msg := kafka.Message{Key: []byte(r.Key), Value: r.Value}
		for k, v := range r.Headers {
			msg.Headers = append(msg.Headers, kafka.Header{Key: k, Value: []byte(v)})
		}
		if err := s.w.WriteMessages(ctx, msg); err != nil {
			return fmt.Errorf("publish snapshot %s %v: %w", name, st, err)
		}
	}
	return nil
}

// Close flushes and closes the writer.
func (s *SnapshotWriter) Close() error { return s.w.Close() }
