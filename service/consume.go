package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"streamer/ingest"
	"streamer/pipeline"
	"streamer/publish"
)

// The consumer is a chain of goroutines, each handing the next its work in
// order through a bounded channel (the backpressure: when the brokers are
// slow, fetching waits):
//
//	fetchLoop    fetch, decode        → runs of records
//	consumeLoop  score, learn, encode → batches
//	publishLoop  write, wait for acks → published offsets
//	commitLoop   commit the highest published offset of each partition
//
// Decoding depends on nothing but the record, so it runs beside the
// pipeline, which must see the records one at a time and in order.

// record is a consumed record and what fetchLoop decoded from it.
type record struct {
	msg   kafka.Message
	ex    ingest.Example // of a record of the examples topic
	label ingest.Label   // of a record of the labels topic
	err   error          // why it could not be decoded
}

// batch is a run of consumed records and the records they produced. Its
// sources are committed once its outputs are acknowledged.
type batch struct {
	// last holds the last source record of each topic partition in the
	// batch, with only its topic, partition and offset.
	last        []kafka.Message
	out         []kafka.Message
	predictions int
	enc         *publish.Encoder // out's keys and values
	// spare takes the buffers of the batch back once it is published, for
	// the consumer to reuse; nil when they are not to be reused.
	spare chan<- batch
}

// release hands the buffers of a published batch back to the consumer:
// the writer holds none of its records after WriteMessages returned.
func (b *batch) release() {
	if b.spare == nil {
		return
	}
	clear(b.out)
	b.enc.Reset()
	select {
	case b.spare <- batch{out: b.out[:0], enc: b.enc}:
	default:
	}
}

// nextBatch returns an empty batch, with the buffers of a published one
// when there is one to reuse.
func nextBatch(spare chan batch, size int) batch {
	select {
	case b := <-spare:
		b.spare = spare
		return b
	default:
		return batch{out: make([]kafka.Message, 0, size), enc: publish.NewEncoder(0), spare: spare}
	}
}

// consumed notes a source record.
func (b *batch) consumed(m *kafka.Message) {
	for i := range b.last {
		if b.last[i].Topic == m.Topic && b.last[i].Partition == m.Partition {
			b.last[i].Offset = max(b.last[i].Offset, m.Offset)
			return
		}
	}
	b.last = append(b.last, kafka.Message{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset})
}

// consumeLoop fetches and decodes records in order (fetchLoop), hands each
// to the pipeline and groups the results into batches for the publisher.
// It returns when ctx ends, after handing over the batch of the records it
// handled; the records fetched and not yet handled are left to be
// consumed again (with a graph, handling them could wait for many window
// inserts, long after shutdown began).
func (s *Service) consumeLoop(ctx, drain context.Context, gens *generations, out chan<- batch, trigger chan<- struct{}) {
	defer close(out)
	runs := make(chan []record, 2)
	// Spent runs go back to fetchLoop, and published batches' buffers come
	// back from publishLoop, so that a drain does not allocate a run and a
	// batch of a few hundred kilobytes every batch_size records.
	spentRuns := make(chan []record, 4)
	spare := make(chan batch, 4)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.fetchLoop(ctx, drain, gens.r, runs, spentRuns) })
	t := s.cfg.Kafka.Topics
	consumed := map[string]prometheus.Counter{
		t.Examples: s.metrics.Consumed.WithLabelValues(t.Examples),
		t.Labels:   s.metrics.Consumed.WithLabelValues(t.Labels),
	}
	var generation int64
	for run := range runs {
		if ctx.Err() != nil {
			// What was fetched but not handled is consumed again on the
			// next start: it is not committed.
			continue
		}
		s.assigned.Store(true)
		if g := gens.count(); g != generation {
			generation = g
			s.newGeneration()
		}
		b := nextBatch(spare, len(run))
		for i := range run {
			if ctx.Err() != nil {
				break // hand over the records handled so far
			}
			consumed[run[i].msg.Topic].Inc()
			s.handle(&run[i], &b)
			if s.pipe.Due() {
				select {
				case trigger <- struct{}{}:
				default:
				}
			}
		}
		clear(run)
		select {
		case spentRuns <- run[:0]:
		default:
		}
		select {
		case out <- b:
		case <-drain.Done():
			return
		}
	}
}

// fetchLoop fetches records in order, decodes them and hands them on in
// runs of at most kafka.batch_size records; a run is handed on earlier when
// its first record has waited kafka.batch_timeout. It returns when ctx
// ends, dropping the run it was filling (consumeLoop would not handle it).
func (s *Service) fetchLoop(ctx, drain context.Context, r *kafka.Reader, runs chan<- []record, spent <-chan []record) {
	defer close(runs)
	var run []record
	var due runDeadline // of the run being filled
	defer due.stop()
	handOn := func() bool {
		due.stop()
		if len(run) == 0 {
			return true
		}
		select {
		case runs <- run:
		case <-drain.Done():
			return false
		}
		run = nil
		return true
	}
	for {
		fetchCtx := ctx
		if len(run) > 0 {
			fetchCtx = due.ctx
		}
		m, err := r.FetchMessage(fetchCtx)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			if !handOn() {
				return
			}
			continue
		case err != nil:
			s.metrics.Retries.WithLabelValues("fetch").Inc()
			s.log.Warn("fetch failed; retrying", "error", err)
			sleep(ctx, s.cfg.Kafka.RetryBackoff)
			continue
		}
		if len(run) == 0 {
			select {
			case run = <-spent:
			default:
				run = make([]record, 0, s.cfg.Kafka.BatchSize)
			}
			due.start(ctx, s.cfg.Kafka.BatchTimeout)
		}
		run = append(run, s.decode(m))
		if len(run) >= s.cfg.Kafka.BatchSize && !handOn() {
			return
		}
	}
}

// runDeadline is the deadline of a run: one timer a run, not one a fetch.
type runDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (d *runDeadline) start(parent context.Context, timeout time.Duration) {
	d.ctx, d.cancel = context.WithTimeout(parent, timeout)
}

func (d *runDeadline) stop() {
	if d.cancel != nil {
		d.cancel()
		d.ctx, d.cancel = nil, nil
	}
}

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

// decode decodes a record of the examples or the labels topic.
func (s *Service) decode(m kafka.Message) record {
	rec := record{msg: m}
	switch m.Topic {
	case s.cfg.Kafka.Topics.Examples:
		rec.ex, rec.err = s.pipe.DecodeExample(m.Value, m.Time)
	case s.cfg.Kafka.Topics.Labels:
		rec.label, rec.err = s.pipe.DecodeLabel(m.Value)
	}
	return rec
}

// handle runs one decoded record through the pipeline.
func (s *Service) handle(rec *record, b *batch) {
	m := &rec.msg
	b.consumed(m)
	s.unread.read(m)
	src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
	t := s.cfg.Kafka.Topics
	switch m.Topic {
	case t.Examples:
		s.handleExample(rec, src, b)
	case t.Labels:
		if rec.err != nil {
			s.pipe.LabelRefused(src)
			s.deadLetter(b, t.LabelsDLQ, "labels", m, rec.err)
			return
		}
		s.pipe.Label(rec.label, src)
	}
}

func (s *Service) handleExample(rec *record, src pipeline.Source, b *batch) {
	t := s.cfg.Kafka.Topics
	err := rec.err
	var pred pipeline.Prediction
	if err == nil {
		pred, err = s.predictExample(rec.ex, src)
	}
	var out kafka.Message
	if err == nil {
		out, err = b.enc.Prediction(t.Predictions, &pred)
	}
	if err != nil {
		s.pipe.ExampleRefused(src)
		s.deadLetter(b, t.ExamplesDLQ, "examples", &rec.msg, err)
		return
	}
	b.out = append(b.out, out)
	b.predictions++
}

// deadLetter queues the dead letter of m with the reason of err.
func (s *Service) deadLetter(b *batch, topic, kind string, m *kafka.Message, err error) {
	reason := pipeline.RefusalReason(err)
	s.metrics.DeadLetters.WithLabelValues(kind, reason).Inc()
	s.deadLetters.Add(1)
	s.log.Warn("dead letter", "topic", m.Topic, "partition", m.Partition, "offset", m.Offset, "reason", reason, "error", err)
	b.out = append(b.out, publish.DeadLetter(topic, *m, reason, err))
}

// publishLoop writes each batch's records and waits for the brokers to
// acknowledge them, then hands the batch's offsets to commitLoop. Batches
// come in fetch order and are written one after the other, so what is
// committed is always a done prefix of each partition. It retries until
// drain ends; what is not committed then is consumed again on the next
// start (at least once). It returns once the last offsets handed over are
// committed, or drain ended.
func (s *Service) publishLoop(drain context.Context, r *kafka.Reader, w *kafka.Writer, batches <-chan batch) {
	published := newPublishedOffsets()
	var wg sync.WaitGroup
	wg.Go(func() { s.commitLoop(drain, r, published) })
	defer wg.Wait()
	defer published.close()
	for b := range batches {
		if len(b.out) > 0 {
			if err := s.retry(drain, "write", func() error { return w.WriteMessages(drain, b.out...) }); err != nil {
				return
			}
			s.metrics.Published.Add(float64(b.predictions))
		}
		published.add(b.last)
		b.release()
	}
}

// commitLoop commits the offsets that publishLoop hands over, while it
// writes the next batches: one commit of the highest offset of each
// partition for all the batches published since the last commit. It
// returns when publishLoop is done, after a last commit, or when drain
// ends.
func (s *Service) commitLoop(drain context.Context, r *kafka.Reader, published *publishedOffsets) {
	for {
		select {
		case <-published.ready:
		case <-drain.Done():
			return
		}
		last, closed := published.take()
		if len(last) > 0 {
			if err := s.retry(drain, "commit", func() error { return r.CommitMessages(drain, last...) }); err != nil {
				return
			}
		}
		if closed {
			return
		}
	}
}

// publishedOffsets holds the highest published offset of each topic
// partition until commitLoop takes them.
type publishedOffsets struct {
	mu     sync.Mutex
	last   []kafka.Message // as batch.last
	closed bool
	ready  chan struct{} // holds a token when there is something to take
}

func newPublishedOffsets() *publishedOffsets {
	return &publishedOffsets{ready: make(chan struct{}, 1)}
}

// add records the last offsets of a published batch.
func (p *publishedOffsets) add(last []kafka.Message) {
	if len(last) == 0 {
		return
	}
	p.mu.Lock()
	b := batch{last: p.last}
	for i := range last {
		b.consumed(&last[i])
	}
	p.last = b.last
	p.mu.Unlock()
	p.signal()
}

// close says that nothing more will be added.
func (p *publishedOffsets) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.signal()
}

func (p *publishedOffsets) signal() {
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// take returns the offsets added since the last take, and whether close
// was called.
func (p *publishedOffsets) take() ([]kafka.Message, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.last
	p.last = nil
	return last, p.closed
}
