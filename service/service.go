package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/config"
	"streamer/control"
	"streamer/internal/collapse"
	"streamer/pipeline"
	"streamer/publish"
	"streamer/schemaregistry"
	"streamer/service/consumer"
	"streamer/service/httpapi"
	"streamer/snapshot"
)

// Service is the streaming job. Run it once.
type Service struct {
	cfg     config.Config
	log     *slog.Logger
	logs    *collapse.Handler // log's: repeated warnings collapse (package collapse)
	metrics *Metrics
	pipe    *pipeline.Pipeline

	conn *brokers.Connection

	ran           atomic.Bool  // Run was called
	retrying      atomic.Value // string: the last failure of an operation retried (retry), "" once it succeeded
	snapshots     atomic.Int64
	restored      atomic.Uint64                  // version of the snapshot restored from, 0 if none
	rebuilt       atomic.Int64                   // examples read again into the window at restore
	countedBefore atomic.Pointer[snapshot.Stats] // the stream's counts at the snapshot restored from, nil if none
	httpAddr      atomic.Value                   // string
	started       chan struct{}                  // closed once the consumer runs
	roles         roles                          // scorer and learner state (roles.go)

	backlog  *consumer.Backlog  // input records on the brokers not read yet
	schedule *consumer.Schedule // of the solves and the window's inserts, by the backlog
	status   consumer.Status    // what the consumers tell
	consumer *consumer.Consumer // of the role, once Run has connected
	// endpoints is what the HTTP endpoints ask of the service: the
	// service itself, but for tests that hold a request in flight.
	endpoints httpapi.Service

	pin     pinning                 // the pin order obeyed (pin.go)
	history *publish.SnapshotWriter // of the history topic (history.go); nil without one
	// versions announces each model before it scores (versions.go); nil
	// in role scorer. lastAnnounce is how long the last announcement took.
	versions     *publish.AnnouncementWriter
	lastAnnounce atomic.Int64 // time.Duration
	// driftAlarms queues the drift alarms for the events topic (drift.go).
	// reacted is set by an alarm that made the learner forget and solve:
	// the model of the next solve is published at once (solveLoop).
	driftAlarms chan pipeline.Alarm
	reacted     atomic.Bool

	// registry is the schema registry's client; nil when no record is
	// Avro.
	registry *schemaregistry.Client
}

// New prepares a service; nothing connects before Run.
func New(cfg config.Config, log *slog.Logger) (*Service, error) {
	pcfg, err := cfg.Pipeline()
	if err != nil {
		return nil, err
	}
	var s *Service
	pcfg.Drift.OnAlarm = func(a pipeline.Alarm) { s.onDriftAlarm(a) }
	var registry *schemaregistry.Client
	if cfg.UsesSchemaRegistry() {
		if registry, err = schemaregistry.New(cfg.Registry()); err != nil {
			return nil, fmt.Errorf("schema_registry.%w", err)
		}
		if cfg.Input.Format == config.FormatAvro {
			pcfg.Decoder.Avro = registry
		}
	}
	pipe, err := pipeline.New(pcfg)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Through an outage every retry loop, and kafka-go's readers, warn
	// again and again: one line per step of each kind says as much.
	logs := collapse.NewHandler(log.Handler(), collapse.Options{})
	log = slog.New(logs)
	s = &Service{
		cfg: cfg, log: log, logs: logs, metrics: newMetrics(pipe), pipe: pipe, started: make(chan struct{}), backlog: consumer.NewBacklog(), registry: registry,
		driftAlarms: make(chan pipeline.Alarm, driftQueue),
	}
	s.schedule = &consumer.Schedule{Config: cfg, Backlog: s.backlog, Metrics: s.metrics.Metrics, Log: log}
	s.endpoints = endpoints{s}
	return s, nil
}

// Pipeline returns the core loop, for its statistics.
func (s *Service) Pipeline() *pipeline.Pipeline { return s.pipe }

// Started is closed once the consumer runs, after any restore.
func (s *Service) Started() <-chan struct{} { return s.started }

// Status is a summary of the service for reports.
type Status struct {
	Pipeline        pipeline.Stats
	Snapshots       int64
	RestoredVersion uint64
	Rebuilt         int64
	DeadLetters     int64
}

// Status returns the current summary.
func (s *Service) Status() Status {
	return Status{
		Pipeline: s.pipe.Stats(), Snapshots: s.snapshots.Load(), RestoredVersion: s.restored.Load(),
		Rebuilt: s.rebuilt.Load(), DeadLetters: s.status.DeadLetters(),
	}
}

// ErrRunTwice refuses a second call of Run.
var ErrRunTwice = errors.New("service: Run was called already: a Service runs once")

// Run runs the service until ctx is canceled, then drains in-flight work,
// flushes, commits and returns nil, within shutdown.timeout; it returns
// once every goroutine it started has ended, HTTP requests in flight
// included. It returns an error when it cannot start, when a goroutine of
// the service stopped for good (the error names it), or when a learner
// lost its lease. It runs once: a second call returns ErrRunTwice.
func (s *Service) Run(ctx context.Context) error {
	if !s.ran.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	if err := s.connect(); err != nil {
		return err
	}
	// Every reader and writer has stopped when Run returns, and the
	// warnings still held back are written.
	defer s.logs.Flush(context.WithoutCancel(ctx))
	defer s.conn.Close()
	if s.learns() {
		s.versions = publish.NewAnnouncementWriter(s.conn, s.cfg.Kafka.Topics.Versions)
		defer s.closeAll(s.versions)
		s.pipe.Learner().SetAnnouncer(s.announceSolved)
	}
	s.consumer = s.newConsumer()
	api, err := s.listenHTTP()
	if err != nil {
		return err
	}
	rt := newRuntime(ctx)
	rt.Go(api.Serve)
	rt.Go(func(context.Context) error {
		// The run ends with its role: the HTTP server stops when a learner
		// lost its lease, or the start failed.
		defer rt.end()
		return s.runRole(rt)
	})
	return rt.Wait()
}

// runRole starts the role and streams until the run ends.
func (s *Service) runRole(rt *runtime) error {
	switch s.cfg.Role {
	case config.RoleScorer:
		return s.runScorer(rt)
	case config.RoleLearner:
		return s.runLearner(rt)
	}
	if err := s.prepare(rt.ctx); err != nil {
		return startFailure(rt.ctx, err)
	}
	return s.stream(rt, s.consumeGroup)
}

// startFailure is what a role returns when its start failed with err:
// nothing when the run was ending anyway.
func startFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// connect builds the connection. The in-process cluster that
// kafka.brokers [embedded] names is started by the caller (streamer run),
// which hands its addresses to the service.
func (s *Service) connect() error {
	bc := s.cfg.Brokers()
	if len(bc.Brokers) == 0 {
		return s.cfg.CheckBrokers(false)
	}
	if bc.IsEmbedded() {
		return errors.New("kafka.brokers: [embedded] is the in-process cluster, which the command line starts: give the service its addresses")
	}
	conn, err := bc.Connect(bc.Brokers)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	s.conn = conn
	s.log.Info("kafka", "config", bc)
	if s.registry != nil {
		s.log.Info("schema registry", "config", s.cfg.Registry(), "input", s.cfg.Input.Format, "output", s.cfg.Output.Format)
	}
	return nil
}

// prepare creates the output topics and restores the newest snapshot,
// retrying while the brokers are away; /readyz says which step it is at.
func (s *Service) prepare(ctx context.Context) error {
	defer s.setWaiting("")
	s.setWaiting("starting: creating the topics")
	if err := s.createTopics(ctx); err != nil {
		return err
	}
	if err := s.registerPredictionSchema(ctx); err != nil {
		return err
	}
	// Before a restore, which may put the seed model in force under a new
	// version, and before any solve.
	s.setWaiting("starting: reading the versions topic")
	if err := s.retry(ctx, "read the versions topic", func() error { _, err := s.reserveVersions(ctx); return err }); err != nil {
		return err
	}
	if s.cfg.Snapshot.Restore {
		s.setWaiting("starting: restoring the newest snapshot and its window")
		if err := s.retry(ctx, "restore", func() error { return s.restore(ctx) }); err != nil {
			return err
		}
	}
	s.setWaiting("starting: reading the control topic")
	return s.retry(ctx, "read the control topic", func() error { return s.catchUpPins(ctx) })
}

// registerPredictionSchema registers the schema of the predictions under
// <predictions topic>-value with output.format avro, retrying while the
// registry is away, and has the consumer write them in Avro.
func (s *Service) registerPredictionSchema(ctx context.Context) error {
	if s.cfg.Output.Format != config.FormatAvro {
		return nil
	}
	subject := publish.PredictionSubject(s.cfg.Kafka.Topics.Predictions)
	s.setWaiting("starting: registering the schema of the predictions under " + subject)
	var format publish.Format
	err := s.retry(ctx, "register the predictions schema", func() (err error) {
		format, err = publish.AvroPredictions(ctx, s.registry, s.cfg.Kafka.Topics.Predictions)
		return err
	})
	if err != nil {
		return err
	}
	s.consumer.Predictions = format
	s.log.Info("predictions schema registered", "subject", subject, "schema_id", format.SchemaID)
	return nil
}

// createTopics creates the output topics, and the lease topic in the
// roles that use it, retrying while the brokers are away.
func (s *Service) createTopics(ctx context.Context) error {
	t := s.cfg.Kafka.Topics
	topics := []brokers.Topic{
		{Name: t.Predictions, Partitions: s.cfg.Kafka.Partitions},
		{Name: t.Review, Partitions: s.cfg.Kafka.Partitions},
		{Name: t.Snapshots, Partitions: 1, Compacted: true},
		{Name: t.ExamplesDLQ, Partitions: s.cfg.Kafka.Partitions},
		{Name: t.LabelsDLQ, Partitions: s.cfg.Kafka.Partitions},
		control.Topic(t.Control),
	}
	if history, ok := s.historyTopic(); ok {
		topics = append(topics, history)
	}
	if s.cfg.Role != config.RoleAll {
		topics = append(topics, brokers.Topic{Name: t.Lease, Partitions: 1})
	}
	if s.learns() {
		topics = append(topics, s.versionsTopic(), brokers.Topic{Name: t.Events, Partitions: 1})
	}
	if s.requests() {
		topics = append(topics, s.requestsTopic())
	}
	return s.retry(ctx, "create topics", func() error { return s.conn.EnsureTopics(ctx, topics...) })
}

// retryFailure says what failed: err, after what unless err says it.
func retryFailure(what string, err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, what) {
		return msg
	}
	return what + ": " + msg
}

// retry runs op until it succeeds or ctx ends, with doubling backoff. The
// last failure is kept for /readyz until an operation retried succeeds.
func (s *Service) retry(ctx context.Context, what string, op func() error) error {
	backoff := s.cfg.Kafka.RetryBackoff
	for {
		err := op()
		if err == nil {
			s.retrying.Store("")
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		err = s.conn.Explain(ctx, err)
		s.retrying.Store(retryFailure(what, err))
		s.metrics.Retries.WithLabelValues(what).Inc()
		s.log.Warn("kafka operation failed; retrying", "op", what, "error", err, "backoff", backoff.String())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// outputs are the writers a role's consumer and solver write with.
type outputs struct {
	records   *kafka.Writer           // predictions and dead letters
	snapshots *publish.SnapshotWriter // of the snapshot topic
}

// An input reads a role's input into the pipeline until rt's context
// ends, and publishes and commits what it read within drain; it closes
// s.started once it reads. It may start background members of rt. It
// sends on trigger when a solve is due.
type input func(rt *runtime, drain context.Context, out outputs, trigger chan<- struct{})

// stream runs what every role runs once started, until the run ends: the
// role's consumer on the calling goroutine, beside the background members
// of a role that learns (the re-solves and the window's hand-off) and of
// every role (the pin follower). Once the consumer has stopped, it stops
// them, publishes a last snapshot where the role learns and the run did
// not fail, and closes the writers.
func (s *Service) stream(rt *runtime, consume input) error {
	out := outputs{
		records:   publish.NewRecordWriter(s.conn, s.writerConfig()),
		snapshots: publish.NewSnapshotWriter(s.conn, s.cfg.Kafka.Topics.Snapshots, s.writerConfig()),
	}
	s.history = s.newHistoryWriter()
	drain, stopDrain := drainContext(rt.ctx, s.cfg.Shutdown.Timeout)
	defer stopDrain()
	trigger := make(chan struct{}, 1)
	if s.learns() {
		rt.GoBackground("solver", func(ctx context.Context) error { return s.solveLoop(ctx, trigger, out) })
		rt.GoBackground("window hand-off", func(ctx context.Context) error { return s.pipe.Run(ctx, s.schedule.InsertShare) })
		events := publish.NewEventWriter(s.conn, s.cfg.Kafka.Topics.Events)
		defer s.closeAll(events)
		rt.GoBackground("drift events", func(ctx context.Context) error { return s.writeDriftEvents(ctx, events) })
	}
	s.followPins(rt)
	consume(rt, drain, out, trigger)
	rt.stopBackground() // the hand-off stopped: the snapshot knows what it dropped
	if s.learns() && !rt.failed() {
		s.finalSnapshot(drain, out.snapshots)
	}
	s.closeAll(out.records, out.snapshots)
	if s.history != nil {
		s.closeAll(s.history)
	}
	if drain.Err() != nil {
		s.log.Warn("shutdown deadline passed before every batch was written; the rest will be redelivered")
	}
	s.logStopped()
	return nil
}

// consumeGroup is the input of roles all and scorer: a reader in
// kafka.group (consumer.Group), beside the liveness watch, which has the
// reader created again when it finds a stalled partition.
func (s *Service) consumeGroup(rt *runtime, drain context.Context, out outputs, trigger chan<- struct{}) {
	restart := make(chan string, 1)
	rt.GoBackground("liveness watch", func(ctx context.Context) error { s.consumer.WatchLiveness(ctx, restart); return nil })
	close(s.started)
	s.log.Info("consuming", "group", s.cfg.Kafka.Group, "role", s.cfg.Role, "topics", s.groupTopics())
	s.consumer.Group(rt.ctx, drain, out.records, trigger, restart)
}

// newConsumer returns the consumer of the role (package consumer).
func (s *Service) newConsumer() *consumer.Consumer {
	c := &consumer.Consumer{
		Config: s.cfg, Conn: s.conn, Pipeline: s.pipe, Backlog: s.backlog, Metrics: s.metrics.Metrics, Status: &s.status,
		Log: s.log, Retry: s.retry, Topics: s.groupTopics(),
	}
	if s.cfg.Role == config.RoleScorer {
		c.Predict, c.NewGeneration = s.scoreExample, s.newGeneration
	}
	return c
}

// drainContext returns a context that ends timeout after parent does.
func drainContext(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(parent, func() {
		time.AfterFunc(timeout, cancel)
	})
	return ctx, func() { stop(); cancel() }
}

func (s *Service) writerConfig() publish.WriterConfig {
	return publish.WriterConfig{
		BatchSize:       s.cfg.Kafka.BatchSize,
		MaxMessageBytes: s.cfg.Kafka.MaxMessageBytes,
	}
}

// closeAll closes readers and writers, each under close_timeout: kafka-go's
// Reader.Close can hang on a broker that went away.
func (s *Service) closeAll(closers ...interface{ Close() error }) {
	for _, c := range closers {
		if err := brokers.CloseWithin(c, s.cfg.Kafka.CloseTimeout); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("close", "error", err)
		}
	}
}
