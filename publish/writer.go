package publish

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/ingest"
	"streamer/pipeline"
	"streamer/snapshot"
)

// WriterConfig sets up the writers. Its zero fields mean the defaults beside
// them.
type WriterConfig struct {
	// BatchSize is the most records of a request to one partition; 0
	// means 500.
	BatchSize int
	// MaxMessageBytes is the largest record value written; snapshots are
	// chunked to fit. 0 means 900,000.
	MaxMessageBytes int
}

func (c WriterConfig) withDefaults() WriterConfig {
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
//
// Its callers hand it whole batches and wait for each WriteMessages, so it
// sends the records of a call at once instead of lingering for more: with
// kafka-go's batch timeout (1s by default, a trap for a latency-bound
// service) every call would wait that long for partition batches that no
// other call would fill.
func NewRecordWriter(conn *brokers.Connection, cfg WriterConfig) *kafka.Writer {
	cfg = cfg.withDefaults()
	return &kafka.Writer{
		Addr:         kafka.TCP(conn.Addrs...),
		Transport:    conn.Transport,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: sendAtOnce,
		BatchSize:    cfg.BatchSize,
		BatchBytes:   int64(4 * cfg.MaxMessageBytes),
		MaxAttempts:  3,
	}
}

// PredictionRecord returns the record of a prediction, keyed by example id.
func PredictionRecord(topic string, p *pipeline.Prediction) (kafka.Message, error) {
	var e Encoder
	return e.Prediction(topic, p)
}

// Encoder encodes the records of predictions into one growing buffer, so
// that a batch of them costs a few allocations instead of two a record. A
// record it returned stays valid when the buffer grows (it keeps the old
// one alive) and until the writer is done with it: start a new Encoder
// for every batch handed to a writer, or Reset it once the writer is done.
type Encoder struct {
	buf    []byte
	format Format
}

// Format is the encoding of predictions. The zero value is JSON.
type Format struct {
	// Avro encodes them in Confluent's wire format under
	// pipeline.PredictionAvroSchema, registered as SchemaID.
	Avro     bool
	SchemaID uint32
}

// Registrar registers a schema under a subject and returns its id, as a
// schema registry does (schemaregistry.Client).
type Registrar interface {
	Register(ctx context.Context, subject, schema string) (uint32, error)
}

// PredictionSubject is the subject the predictions' schema is registered
// under for topic: the registry's default naming of a topic's values.
func PredictionSubject(topic string) string { return topic + "-value" }

// AvroPredictions registers pipeline.PredictionAvroSchema under topic's
// subject (PredictionSubject) and returns the format that writes
// predictions under it.
func AvroPredictions(ctx context.Context, r Registrar, topic string) (Format, error) {
	id, err := r.Register(ctx, PredictionSubject(topic), pipeline.PredictionAvroSchema)
	if err != nil {
		return Format{}, err
	}
	return Format{Avro: true, SchemaID: id}, nil
}

// NewEncoder returns a JSON encoder whose buffer starts with room for size
// bytes, such as the size of the previous batch (Len).
func NewEncoder(size int) *Encoder { return &Encoder{buf: make([]byte, 0, size)} }

// NewEncoderOf is NewEncoder in format f.
func NewEncoderOf(size int, f Format) *Encoder {
	return &Encoder{buf: make([]byte, 0, size), format: f}
}

// Reset empties the encoder for the next batch, reusing its buffer: the
// records it returned must no longer be used (a synchronous writer's
// WriteMessages has returned).
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Len returns the bytes encoded so far.
func (e *Encoder) Len() int { return len(e.buf) }

// Prediction returns the record of a prediction, keyed by example id.
func (e *Encoder) Prediction(topic string, p *pipeline.Prediction) (kafka.Message, error) {
	start := len(e.buf)
	buf := append(e.buf, p.ID...)
	keyEnd := len(buf)
	var err error
	if e.format.Avro {
		h := ingest.WireHeader(e.format.SchemaID)
		buf, err = p.AppendAvro(append(buf, h[:]...))
	} else {
		buf, err = p.AppendJSON(buf)
	}
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encode prediction %q: %w", p.ID, err)
	}
	e.buf = buf
	end := len(buf)
	// Full slice expressions, so that no one appending to a key or a value
	// can write over the next record.
	return kafka.Message{Topic: topic, Key: buf[start:keyEnd:keyEnd], Value: buf[keyEnd:end:end]}, nil
}

// sendAtOnce is the batch timeout of a writer whose calls are whole
// batches. kafka-go adds a call's records to each partition's batch under
// that partition's lock, and the batch's timer can only queue it once the
// lock is released, so the smallest timeout sends every call's records in
// one request per partition, neither split nor delayed.
const sendAtOnce = time.Nanosecond

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

// AnnouncementWriter writes the announcements of models (snapshot.Announcement)
// to a topic of one partition, keyed by model name, one at a time: a model
// is announced before it scores, so Announce returns only once every
// in-sync replica has the record.
type AnnouncementWriter struct {
	w *kafka.Writer
}

// NewAnnouncementWriter returns a writer of announcements to topic.
func NewAnnouncementWriter(conn *brokers.Connection, topic string) *AnnouncementWriter {
	return &AnnouncementWriter{w: &kafka.Writer{
		Addr:         kafka.TCP(conn.Addrs...),
		Transport:    conn.Transport,
		Topic:        topic,
		Balancer:     kafka.BalancerFunc(func(kafka.Message, ...int) int { return 0 }),
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: sendAtOnce,
		BatchSize:    1,
		MaxAttempts:  3,
	}}
}

// Announce writes a and returns once it is acknowledged.
func (a *AnnouncementWriter) Announce(ctx context.Context, ann snapshot.Announcement) error {
	data, err := snapshot.EncodeAnnouncement(ann)
	if err != nil {
		return err
	}
	if err := a.w.WriteMessages(ctx, kafka.Message{Key: []byte(ann.Name), Value: data}); err != nil {
		return fmt.Errorf("announce %s %v: %w", ann.Name, ann.Stamp(), err)
	}
	return nil
}

// Close closes the writer.
func (a *AnnouncementWriter) Close() error { return a.w.Close() }
