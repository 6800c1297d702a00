package service

import (
	"context"
	"errors"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/ingest"
	"streamer/online"
	"streamer/pipeline"
	"streamer/publish"
)

// batch is a run of consumed records and the records they produced. Its
// sources are committed once its outputs are acknowledged.
type batch struct {
	sources []kafka.Message
	out     []kafka.Message
}

// consumeLoop fetches records in order, hands each to the pipeline and
// groups the results into batches for the publisher. The bounded batches
// channel is the backpressure: when the brokers are slow, fetching waits.
// It returns when ctx ends, after handing over the last partial batch.
func (s *Service) consumeLoop(ctx, drain context.Context, r *kafka.Reader, out chan<- batch, trigger chan<- struct{}) {
	defer close(out)
	var b batch
	flush := func() {
		if len(b.sources) == 0 {
			return
		}
		select {
		case out <- b:
		case <-drain.Done():
		}
		b = batch{}
	}
	for {
		fetchCtx, cancel := ctx, context.CancelFunc(func() {})
		if len(b.sources) > 0 {
			fetchCtx, cancel = context.WithTimeout(ctx, s.cfg.Kafka.BatchTimeout)
		}
		m, err := r.FetchMessage(fetchCtx)
		cancel()
		switch {
		case ctx.Err() != nil:
			flush()
			return
		case errors.Is(err, context.DeadlineExceeded):
			flush()
			continue
		case err != nil:
			s.metrics.Retries.WithLabelValues("fetch").Inc()
			s.log.Warn("fetch failed; retrying", "error", err)
			sleep(ctx, s.cfg.Kafka.RetryBackoff)
			continue
		}
		s.handle(m, &b)
		if len(b.sources) >= s.cfg.Kafka.BatchSize {
			flush()
		}
		if s.pipe.Due() {
			select {
			case trigger <- struct{}{}:
			default:
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// handle runs one record through the pipeline.
func (s *Service) handle(m kafka.Message, b *batch) {
	b.sources = append(b.sources, m)
	s.metrics.Consumed.WithLabelValues(m.Topic).Inc()
	s.assigned.Store(true)
	src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
	t := s.cfg.Kafka.Topics
	switch m.Topic {
	case t.Examples:
		s.handleExample(m, src, b)
	case t.Labels:
		l, err := s.pipe.DecodeLabel(m.Value)
		if err != nil {
			s.deadLetter(b, t.LabelsDLQ, "labels", m, err)
			return
		}
		s.pipe.Label(l, src)
	}
}

func (s *Service) handleExample(m kafka.Message, src pipeline.Source, b *batch) {
	t := s.cfg.Kafka.Topics
	ex, err := s.pipe.DecodeExample(m.Value, m.Time)
	if err != nil {
		s.deadLetter(b, t.ExamplesDLQ, "examples", m, err)
		return
	}
	pred, err := s.predictExample(ex, src)
	if err != nil {
		s.deadLetter(b, t.ExamplesDLQ, "examples", m, err)
		return
	}
	rec, err := publish.PredictionRecord(t.Predictions, &pred)
	if err != nil {
		s.deadLetter(b, t.ExamplesDLQ, "examples", m, err)
		return
	}
	b.out = append(b.out, rec)
}

// deadLetter queues the dead letter of m with the reason of err.
func (s *Service) deadLetter(b *batch, topic, kind string, m kafka.Message, err error) {
	reason := rejectReason(err)
	s.metrics.DeadLetters.WithLabelValues(kind, reason).Inc()
	s.deadLetters.Add(1)
	s.log.Warn("dead letter", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "reason", reason, "error", err)
	b.out = append(b.out, publish.DeadLetter(topic, m, reason, err))
}

// rejectReason is the short code of why an input was refused: the
// dead-letter header dlq-reason, and the reason of a 400 from
// /v1/predict.
func rejectReason(err error) string {
	if r := ingest.ReasonOf(err); r != "" {
		return string(r)
	}
	if errors.Is(err, online.ErrIncompatible) {
		return "incompatible_vector"
	}
	return "rejected"
}

// publishLoop writes each batch's records, waits for the brokers to
// acknowledge them, then commits the batch's sources. Batches come in
// fetch order, so what is committed is always a done prefix of each
// partition. It retries until drain ends; what is not committed then is
// consumed again on the next start (at least once).
func (s *Service) publishLoop(drain context.Context, r *kafka.Reader, w *kafka.Writer, batches <-chan batch) {
	for b := range batches {
		if len(b.out) > 0 {
			if err := s.retry(drain, "write", func() error { return w.WriteMessages(drain, b.out...) }); err != nil {
				return
			}
			for _, m := range b.out {
				if m.Topic == s.cfg.Kafka.Topics.Predictions {
					s.metrics.Published.Inc()
				}
			}
		}
		if err := s.retry(drain, "commit", func() error { return r.CommitMessages(drain, b.sources...) }); err != nil {
			return
		}
	}
}
