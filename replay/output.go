package replay

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/pipeline"
	"streamer/publish"
)

// FileOutput writes predictions as JSON lines.
type FileOutput struct {
	f *os.File
	w *bufio.Writer
}

// NewFileOutput creates (or truncates) path.
func NewFileOutput(path string) (*FileOutput, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("replay output: %w", err)
	}
	return &FileOutput{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Write implements Output.
func (o *FileOutput) Write(_ context.Context, p *pipeline.Prediction) error {
	line, err := p.Marshal()
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := o.w.Write(line); err != nil {
		return fmt.Errorf("replay output: %w", err)
	}
	return nil
}

// Close implements Output.
func (o *FileOutput) Close(context.Context) error {
	if err := o.w.Flush(); err != nil {
		o.f.Close()
		return fmt.Errorf("replay output: %w", err)
	}
	return o.f.Close()
}

// TopicOutput writes predictions to a topic in batches, each acknowledged
// by all in-sync replicas.
type TopicOutput struct {
	w     *kafka.Writer
	topic string
	enc   *publish.Encoder
	buf   []kafka.Message
}

// NewTopicOutput returns an output to topic in format f, which it creates
// with partitions partitions when it is missing, as the service creates
// the topics it writes to.
func NewTopicOutput(ctx context.Context, conn *brokers.Connection, topic string, partitions int, f publish.Format) (*TopicOutput, error) {
	if err := conn.EnsureTopics(ctx, brokers.Topic{Name: topic, Partitions: partitions}); err != nil {
		return nil, fmt.Errorf("output topic: %w", err)
	}
	return &TopicOutput{w: publish.NewRecordWriter(conn, publish.WriterConfig{}), topic: topic, enc: publish.NewEncoderOf(0, f)}, nil
}

// Write implements Output.
func (o *TopicOutput) Write(ctx context.Context, p *pipeline.Prediction) error {
	m, err := o.enc.Prediction(o.topic, p)
	if err != nil {
		return err
	}
	o.buf = append(o.buf, m)
	if len(o.buf) >= 2000 {
		return o.flush(ctx)
	}
	return nil
}

func (o *TopicOutput) flush(ctx context.Context) error {
	if len(o.buf) == 0 {
		return nil
	}
	if err := o.w.WriteMessages(ctx, o.buf...); err != nil {
		return fmt.Errorf("replay output to %s: %w", o.topic, err)
	}
	o.buf = o.buf[:0]
	o.enc.Reset()
	return nil
}

// Close implements Output.
func (o *TopicOutput) Close(ctx context.Context) error {
	if err := o.flush(ctx); err != nil {
		return err
	}
	return o.w.Close()
}

// deadLetters batches dead-letter records for their topics.
type deadLetters struct {
	w   *kafka.Writer
	buf []kafka.Message
}

func newDeadLetters(conn *brokers.Connection) *deadLetters {
	return &deadLetters{w: publish.NewRecordWriter(conn, publish.WriterConfig{})}
}

func (d *deadLetters) add(m kafka.Message) { d.buf = append(d.buf, m) }

func (d *deadLetters) flush(ctx context.Context) error {
	if len(d.buf) == 0 {
		return nil
	}
	if err := d.w.WriteMessages(ctx, d.buf...); err != nil {
		return fmt.Errorf("dead letters: %w", err)
	}
	d.buf = nil
	return nil
}

func (d *deadLetters) Close() error { return d.w.Close() }
