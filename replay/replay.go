package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/ingest"
	"streamer/pipeline"
	"streamer/publish"
	"streamer/snapshot"
)

// Config describes a replay.
type Config struct {
	Topics     Topics
	Partitions []int // of the examples topic; nil means all
	From, To   Bound
	// Snapshot is the pinned model, or with Retrain the model to start
	// from (nil: from nothing).
	Snapshot *snapshot.Snapshot
	Retrain  bool
	// Pipeline configures decoding, review routing and explanations and,
	// with Retrain, the learner, as in the service. Re-solves are
	// triggered by counts only, so that the same input gives the same
	// output.
	Pipeline pipeline.Config
	Out      Output
	// Progress, when set, is told how many records were handled of the
	// total, now and then.
	Progress func(done, total int64)
}

// Topics names the topics a replay reads and writes.
type Topics struct {
	Examples, Labels, ExamplesDLQ, LabelsDLQ string
}

// Output receives the predictions of a replay.
type Output interface {
	Write(ctx context.Context, p *pipeline.Prediction) error
	Close(ctx context.Context) error
}

// Summary is what a replay did.
type Summary struct {
	Records          int64    `json:"records"`
	Predictions      int64    `json:"predictions"`
	BadRecords       int64    `json:"bad_records"`
	Seconds          float64  `json:"seconds"`
	RecordsPerSecond float64  `json:"records_per_second"`
	Labeled          int      `json:"labeled"`
	Accuracy         *float64 `json:"accuracy,omitempty"`
	// ModelVersion is the version of the model in force at the end: the
	// pinned one, or the last one learned (0: none yet).
	ModelVersion uint64           `json:"model_version"`
	Interrupted  bool             `json:"interrupted,omitempty"`
	Ranges       []PartitionRange `json:"ranges"`
	// Reached holds, per examples partition, the offset after the last
	// record handled: how far an interrupted replay got.
	Reached map[int]int64 `json:"reached"`
}

// Run replays the range. It stops cleanly when ctx ends, with Interrupted
// set and Reached saying how far it got.
func Run(ctx context.Context, conn *brokers.Connection, cfg Config) (Summary, error) {
	start := time.Now()
	if cfg.Snapshot == nil && !cfg.Retrain {
		return Summary{}, errors.New("replay needs a pinned snapshot or retraining")
	}
	if err := conn.EnsureTopics(ctx, brokers.Topic{Name: cfg.Topics.ExamplesDLQ}, brokers.Topic{Name: cfg.Topics.LabelsDLQ}); err != nil {
		return Summary{}, err
	}
	reads, ranges, err := sources(ctx, conn, cfg)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Ranges: ranges, Reached: map[int]int64{}}
	var total int64
	for _, r := range reads {
		total += r.To - r.From
	}
	h, err := newHandler(cfg, conn)
	if err != nil {
		return sum, err
	}
	defer h.dlq.Close()
	// The readers end when their range does or when they are stopped; every
	// return of Run stops and waits for them.
	mr := conn.ReadMerged(ctx, reads, 4096)
	defer mr.Close()
	for ctx.Err() == nil {
		m, ok, err := mr.Next()
		if err != nil {
			return sum, err
		}
		if !ok {
			break
		}
		if err := h.handle(ctx, m, &sum); err != nil {
			return sum, err
		}
		if cfg.Progress != nil && sum.Records%100 == 0 {
			cfg.Progress(sum.Records, total)
		}
	}
	sum.Interrupted = ctx.Err() != nil
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := cfg.Out.Close(closeCtx); err != nil {
		return sum, err
	}
	if err := h.dlq.flush(closeCtx); err != nil {
		return sum, err
	}
	h.finish(&sum)
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.RecordsPerSecond = float64(sum.Records) / sum.Seconds
	}
	if cfg.Progress != nil {
		cfg.Progress(sum.Records, total)
	}
	return sum, nil
}

// sources resolves the ranges to read, one per partition: the examples
// topic, and with Retrain the labels topic over the same time span, whose
// records come after the examples of the same time.
func sources(ctx context.Context, conn *brokers.Connection, cfg Config) ([]brokers.Range, []PartitionRange, error) {
	parts := cfg.Partitions
	if parts == nil {
		var err error
		if parts, err = conn.Partitions(ctx, cfg.Topics.Examples); err != nil {
			return nil, nil, err
		}
	}
	ranges, err := Resolve(ctx, conn, cfg.Topics.Examples, parts, cfg.From, cfg.To)
	if err != nil {
		return nil, nil, err
	}
	var reads []brokers.Range
	for _, r := range ranges {
		reads = append(reads, brokers.Range{Topic: cfg.Topics.Examples, Partition: r.Partition, From: r.From, To: r.To})
	}
	if !cfg.Retrain {
		return reads, ranges, nil
	}
	labels, err := labelRanges(ctx, conn, cfg.Topics, ranges)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range labels {
		reads = append(reads, brokers.Range{Topic: cfg.Topics.Labels, Partition: r.Partition, From: r.From, To: r.To, Rank: 1})
	}
	return reads, ranges, nil
}

// labelRanges returns the ranges of the labels topic between the times of
// the first and the last example replayed: a later label cannot change a
// prediction of the range.
func labelRanges(ctx context.Context, conn *brokers.Connection, topics Topics, examples []PartitionRange) ([]PartitionRange, error) {
	first, last, ok, err := timeSpan(ctx, conn, topics.Examples, examples)
	if err != nil || !ok {
		return nil, err
	}
	parts, err := conn.Partitions(ctx, topics.Labels)
	if errors.Is(err, brokers.ErrUnknownTopic) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Resolve(ctx, conn, topics.Labels, parts, Bound{Time: first, isTime: true}, Bound{Time: last.Add(time.Millisecond), isTime: true})
}

// timeSpan reads the first and last record of each range for their times.
func timeSpan(ctx context.Context, conn *brokers.Connection, topic string, ranges []PartitionRange) (first, last time.Time, ok bool, err error) {
	for _, r := range ranges {
		if r.To <= r.From {
			continue
		}
		for _, off := range []int64{r.From, r.To - 1} {
			t, err := recordTime(ctx, conn, topic, r.Partition, off)
			if err != nil {
				return first, last, false, err
			}
			if !ok || t.Before(first) {
				first = t
			}
			if !ok || t.After(last) {
				last = t
			}
			ok = true
		}
	}
	return first, last, ok, nil
}

func recordTime(ctx context.Context, conn *brokers.Connection, topic string, partition int, offset int64) (time.Time, error) {
	var at time.Time
	found := false
	err := conn.ReadRange(ctx, topic, partition, offset, offset+1, func(m kafka.Message) error {
		at, found = m.Time, true
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if !found {
		return time.Time{}, fmt.Errorf("%s[%d]: no record at offset %d", topic, partition, offset)
	}
	return at, nil
}

// handler turns records into predictions: with the pinned model, or with
// the core loop when retraining.
type handler struct {
	cfg     Config
	pipe    *pipeline.Pipeline
	dlq     *deadLetters
	score   *pipeline.Prequential
	labeled int
}

func newHandler(cfg Config, conn *brokers.Connection) (*handler, error) {
	h := &handler{cfg: cfg, dlq: newDeadLetters(conn), score: pipeline.NewPrequential(0, 0)}
	pcfg := cfg.Pipeline
	pcfg.Baseline = false
	pipe, err := pipeline.New(pcfg)
	if err != nil {
		return nil, err
	}
	if cfg.Snapshot != nil {
		// A pinned model scores as a service's scorer would, review
		// routing and explanations included; when retraining, the
		// replay's solves continue the snapshot's numbering, under its
		// epoch.
		pipe.SetModel(pipeline.Restored(cfg.Snapshot))
		pipe.Learner().SetEpoch(cfg.Snapshot.Epoch)
	}
	h.pipe = pipe
	return h, nil
}

func (h *handler) handle(ctx context.Context, m kafka.Message, sum *Summary) error {
	sum.Records++
	src := pipeline.Source{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset}
	if m.Topic == h.cfg.Topics.Labels {
		if l, err := h.pipe.DecodeLabelRecord(ctx, m.Key, m.Value); errors.Is(err, ingest.ErrSchemaUnavailable) {
			return fmt.Errorf("%s[%d] at %d: %w", m.Topic, m.Partition, m.Offset, err)
		} else if err != nil {
			sum.BadRecords++
			h.dlq.add(publish.DeadLetter(h.cfg.Topics.LabelsDLQ, m, reason(err), err))
		} else {
			h.pipe.Label(l, src)
		}
		return nil
	}
	sum.Reached[m.Partition] = m.Offset + 1
	// The pipeline's decoder names the example's inputs when
	// explanations are on.
	ex, err := h.pipe.DecodeExampleRecord(ctx, m.Key, m.Value, m.Time)
	if errors.Is(err, ingest.ErrSchemaUnavailable) {
		// Not a bad record: the replay stops rather than refuse it.
		return fmt.Errorf("%s[%d] at %d: %w", m.Topic, m.Partition, m.Offset, err)
	}
	var p pipeline.Prediction
	if err == nil {
		p, err = h.predict(ctx, ex, src)
	}
	if err != nil {
		sum.BadRecords++
		h.dlq.add(publish.DeadLetter(h.cfg.Topics.ExamplesDLQ, m, reason(err), err))
		return nil
	}
	sum.Predictions++
	return h.cfg.Out.Write(ctx, &p)
}

// predict scores ex with the pinned model, or runs it through the core
// loop and solves when a solve is due.
func (h *handler) predict(ctx context.Context, ex ingest.Example, src pipeline.Source) (pipeline.Prediction, error) {
	if !h.cfg.Retrain {
		p, err := h.pipe.ScoreOne(ex, src)
		if err != nil {
			return p, err
		}
		if ex.Labeled {
			h.labeled++
			h.score.Add(*p.Label, ex.Label, h.labeled)
		}
		return p, nil
	}
	p, err := h.pipe.Example(ex, src)
	if err != nil {
		return p, err
	}
	if h.pipe.Due() {
		if _, err := h.pipe.Solve(context.WithoutCancel(ctx)); err != nil && !pipeline.IsSkip(err) {
			return p, fmt.Errorf("solve: %w", err)
		}
	}
	return p, nil
}

func (h *handler) finish(sum *Summary) {
	if h.cfg.Retrain {
		st := h.pipe.Stats()
		sum.ModelVersion = st.ModelVersion
		sum.Labeled = st.SSL.Total
		if st.SSL.Total > 0 {
			acc := st.SSL.Accuracy()
			sum.Accuracy = &acc
		}
		return
	}
	sum.ModelVersion = h.cfg.Snapshot.Version
	sum.Labeled = h.labeled
	if h.labeled > 0 {
		acc := h.score.Total().Accuracy()
		sum.Accuracy = &acc
	}
}

func reason(err error) string {
	if r := ingest.ReasonOf(err); r != "" {
		return string(r)
	}
	return "rejected"
}
