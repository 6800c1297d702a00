package consumer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"streamer/brokers"
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

// Group reads the Topics in kafka.group until ctx ends, handing the
// records to the pipeline, and publishes and commits what it read within
// drain. It closes its reader and creates another when the liveness watch
// asks for one on restart (WatchLiveness).
func (c *Consumer) Group(ctx, drain context.Context, w *kafka.Writer, trigger chan<- struct{}, restart <-chan string) {
	for {
		reader := c.newReader()
		reason := c.consume(ctx, drain, reader, w, trigger, restart)
		// Closing the reader leaves the group, so that the next reader's
		// join does not wait for this member's session to time out.
		c.closeAll(reader)
		if reason == "" || ctx.Err() != nil {
			return
		}
		c.Metrics.Restarts.WithLabelValues("stall").Inc()
		c.Log.Warn("consumer reader created again", "reason", reason)
	}
}

// consume runs one reader: it fetches and publishes until ctx ends, and
// returns "", or until the liveness watch asks for a new reader, and
// returns its reason. Either way the batches fetched are published and
// committed first: within drain when ctx ended, within shutdown.timeout
// when the reader is to be replaced (what is not committed then is
// consumed again by the next reader).
func (c *Consumer) consume(ctx, drain context.Context, r *kafka.Reader, w *kafka.Writer, trigger chan<- struct{}, restart <-chan string) string {
	fetchCtx, stopFetch := context.WithCancel(ctx)
	defer stopFetch()
	publishCtx, stopPublish := context.WithCancel(drain)
	defer stopPublish()
	batches := make(chan batch, 4)
	published := make(chan struct{})
	var reason string
	var wg sync.WaitGroup
	wg.Go(func() { defer close(published); c.publishLoop(publishCtx, r, w, batches) })
	gens := &generations{r: r}
	wg.Go(func() { c.watchReader(fetchCtx, gens) })
	wg.Go(func() {
		select {
		case <-fetchCtx.Done():
			return
		case reason = <-restart:
		}
		stopFetch()
		select {
		case <-published:
		case <-time.After(c.Config.Shutdown.Timeout):
			stopPublish()
		}
	})
	c.consumeLoop(fetchCtx, publishCtx, gens, batches, trigger)
	<-published
	stopFetch()
	wg.Wait()
	return reason
}

func (c *Consumer) newReader() *kafka.Reader {
	start := kafka.FirstOffset
	if c.Config.Kafka.Start == "latest" {
		start = kafka.LastOffset
	}
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:     c.Conn.Addrs,
		Dialer:      c.Conn.Dialer,
		GroupID:     c.Config.Kafka.Group,
		GroupTopics: c.Topics,
		StartOffset: start,
		MinBytes:    1,
		// A fetch must hold the largest record; beyond that, small fetches
		// keep what the reader buffers bounded.
		MaxBytes:          max(2*c.Config.Limits.MaxMessageBytes, 1<<20),
		MaxWait:           brokers.FetchMaxWait,
		QueueCapacity:     1000,
		SessionTimeout:    c.Config.Kafka.SessionTimeout,
		RebalanceTimeout:  c.Config.Kafka.RebalanceTimeout,
		HeartbeatInterval: c.Config.Kafka.SessionTimeout / 4,
		// kafka-go leaves the group after a failed join (a join that
		// outlived its deadline during a long rebalance) and waits this
		// long before joining again; its 5s default adds to every rejoin.
		JoinGroupBackoff: c.Config.Kafka.RetryBackoff,
		ReadBackoffMin:   50 * time.Millisecond,
		ReadBackoffMax:   2 * time.Second,
		ErrorLogger:      ReaderErrorLogger(c.Log),
	})
}

// watchReader sets the assignment flag once the reader has joined the
// group. Lag and liveness are measured from the brokers' side
// (liveness.go), not from the reader's statistics: kafka-go keeps one lag
// figure for all partitions, the last any partition reader saw.
func (c *Consumer) watchReader(ctx context.Context, gens *generations) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for gens.count() == 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	c.Status.assigned.Store(true)
}

// generations counts the group generations a reader has joined. kafka-go
// tells them only as ReaderStats.Rebalances, a counter that each Stats
// call resets, and counts there also the partition readers it re-creates
// after a leader moved: a count may be above the generations, never below.
// The count goes up before the first record of a generation is fetched.
type generations struct {
	r  *kafka.Reader
	mu sync.Mutex
	n  int64
}

func (g *generations) count() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n += g.r.Stats().Rebalances
	return g.n
}

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
	reviews     int              // of the predictions, those routed to review
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
func nextBatch(spare chan batch, size int, f publish.Format) batch {
	select {
	case b := <-spare:
		b.spare = spare
		return b
	default:
		return batch{out: make([]kafka.Message, 0, size), enc: publish.NewEncoderOf(0, f), spare: spare}
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
func (c *Consumer) consumeLoop(ctx, drain context.Context, gens *generations, out chan<- batch, trigger chan<- struct{}) {
	defer close(out)
	runs := make(chan []record, 2)
	// Spent runs go back to fetchLoop, and published batches' buffers come
	// back from publishLoop, so that a drain does not allocate a run and a
	// batch of a few hundred kilobytes every batch_size records.
	spentRuns := make(chan []record, 4)
	spare := make(chan batch, 4)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.fetchLoop(ctx, drain, gens.r, runs, spentRuns) })
	t := c.Config.Kafka.Topics
	consumed := map[string]prometheus.Counter{
		t.Examples: c.Metrics.Consumed.WithLabelValues(t.Examples),
		t.Labels:   c.Metrics.Consumed.WithLabelValues(t.Labels),
	}
	var generation int64
	for run := range runs {
		if ctx.Err() != nil {
			// What was fetched but not handled is consumed again on the
			// next start: it is not committed.
			continue
		}
		c.Status.assigned.Store(true)
		if g := gens.count(); g != generation {
			generation = g
			if c.NewGeneration != nil {
				c.NewGeneration()
			}
		}
		b := nextBatch(spare, len(run), c.Predictions)
		for i := range run {
			if ctx.Err() != nil {
				break // hand over the records handled so far
			}
			consumed[run[i].msg.Topic].Inc()
			c.handle(&run[i], &b)
			if c.Pipeline.Due() {
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
func (c *Consumer) fetchLoop(ctx, drain context.Context, r *kafka.Reader, runs chan<- []record, spent <-chan []record) {
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
			c.Metrics.Retries.WithLabelValues("fetch").Inc()
			c.Log.Warn("fetch failed; retrying", "error", err)
			sleep(ctx, c.Config.Kafka.RetryBackoff)
			continue
		}
		if len(run) == 0 {
			select {
			case run = <-spent:
			default:
				run = make([]record, 0, c.Config.Kafka.BatchSize)
			}
			due.start(ctx, c.Config.Kafka.BatchTimeout)
		}
		rec, ok := c.decodeRecord(ctx, m)
		if !ok {
			return
		}
		run = append(run, rec)
		if len(run) >= c.Config.Kafka.BatchSize && !handOn() {
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

// decode decodes a record of the examples or the labels topic.
func (c *Consumer) decode(ctx context.Context, m kafka.Message) record {
	rec := record{msg: m}
	switch m.Topic {
	case c.Config.Kafka.Topics.Examples:
		rec.ex, rec.err = c.Pipeline.DecodeExampleRecord(ctx, m.Key, m.Value, m.Time)
	case c.Config.Kafka.Topics.Labels:
		rec.label, rec.err = c.Pipeline.DecodeLabelRecord(ctx, m.Key, m.Value)
	}
	return rec
}

// handle runs one decoded record through the pipeline.
func (c *Consumer) handle(rec *record, b *batch) {
	m := &rec.msg
	b.consumed(m)
	c.Backlog.Read(m)
	src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
	t := c.Config.Kafka.Topics
	switch m.Topic {
	case t.Examples:
		c.handleExample(rec, src, b)
	case t.Labels:
		if rec.err != nil {
			c.Pipeline.LabelRefused(src)
			c.deadLetter(b, t.LabelsDLQ, "labels", m, rec.err)
			return
		}
		c.Pipeline.Label(rec.label, src)
	}
}

func (c *Consumer) handleExample(rec *record, src pipeline.Source, b *batch) {
	t := c.Config.Kafka.Topics
	err := rec.err
	var pred pipeline.Prediction
	if err == nil {
		pred, err = c.predict(rec.ex, src)
	}
	var out kafka.Message
	if err == nil {
		out, err = b.enc.Prediction(t.Predictions, &pred)
	}
	if err != nil {
		c.Pipeline.ExampleRefused(src)
		c.deadLetter(b, t.ExamplesDLQ, "examples", &rec.msg, err)
		return
	}
	b.out = append(b.out, out)
	b.predictions++
	if pred.Review {
		// The same key and value: both stay valid as long as out does.
		b.out = append(b.out, kafka.Message{Topic: t.Review, Key: out.Key, Value: out.Value})
		b.reviews++
	}
}

// publishLoop writes each batch's records and waits for the brokers to
// acknowledge them, then hands the batch's offsets to commitLoop. Batches
// come in fetch order and are written one after the other, so what is
// committed is always a done prefix of each partition. It retries until
// drain ends; what is not committed then is consumed again on the next
// start (at least once). It returns once the last offsets handed over are
// committed, or drain ended.
func (c *Consumer) publishLoop(drain context.Context, r *kafka.Reader, w *kafka.Writer, batches <-chan batch) {
	published := newPublishedOffsets()
	var wg sync.WaitGroup
	wg.Go(func() { c.commitLoop(drain, r, published) })
	defer wg.Wait()
	defer published.close()
	for b := range batches {
		if len(b.out) > 0 {
			if err := c.Retry(drain, "write", func() error { return w.WriteMessages(drain, b.out...) }); err != nil {
				return
			}
			c.Metrics.Published.Add(float64(b.predictions))
			c.Metrics.Reviews.Add(float64(b.reviews))
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
func (c *Consumer) commitLoop(drain context.Context, r *kafka.Reader, published *publishedOffsets) {
	for {
		select {
		case <-published.ready:
		case <-drain.Done():
			return
		}
		last, closed := published.take()
		if len(last) > 0 {
			if err := c.Retry(drain, "commit", func() error { return r.CommitMessages(drain, last...) }); err != nil {
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
