package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/pipeline"
	"streamer/synth"
)

// testConfig returns a small, fast configuration on the cluster at addrs.
func testConfig(t *testing.T, addrs []string, extra ...string) config.Config {
	t.Helper()
	overrides := append([]string{
		"http.listen=127.0.0.1:0",
		"window.max_examples=400",
		"window.k=5",
		"schedule.solve_examples=100",
		"schedule.solve_labels=5",
		"schedule.solve_interval=200ms",
		"snapshot.every_solves=1",
		"kafka.partitions=2",
		"kafka.batch_timeout=2ms",
		"kafka.retry_backoff=50ms",
		"kafka.close_timeout=2s",
		"shutdown.timeout=10s",
		"features.dim=16384",
		"log.level=warn",
	}, extra...)
	cfg, err := config.Load("", overrides)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kafka.Brokers = addrs
	return cfg
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

func startCluster(t *testing.T) *embedded.Cluster {
	t.Helper()
	c, err := embedded.Start(embedded.Config{Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// streamWriter produces examples, and each revealed label delay examples
// later, as a user's producers would.
type streamWriter struct {
	w       *kafka.Writer
	created bool // the examples and labels topics exist
	gen     *synth.TextStream
	n       int
	rate    int // one label every rate examples
	delay   int
	queued  []kafka.Message
	labels  int // label records written
	// truth is each example's label, labeled says which were written.
	truth, labeled map[string]string
	// relabel, when set, changes the labels revealed from now on.
	relabel func(string) string
}

// newStreamWriter returns a stream writer to the cluster at addrs; the
// writer and its transport are closed when the test ends.
func newStreamWriter(t *testing.T, addrs []string, seed uint64) *streamWriter {
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, AllowAutoTopicCreation: true, Transport: newTestTransport(t)}
	t.Cleanup(func() { w.Close() })
	return &streamWriter{w: w, gen: synth.NewTextStream(synth.TextStreamConfig{Seed: seed, Topics: 2}), rate: 8, delay: 30,
		truth: map[string]string{}, labeled: map[string]string{}}
}

// fixture is an embedded cluster, the predictions read from it and a
// stream writer to it, for tests that run the service against them; its
// context ends with the test, two minutes at most.
type fixture struct {
	addrs  []string
	ctx    context.Context
	preds  *predictionLog
	stream *streamWriter
}

func newFixture(t *testing.T, seed uint64) *fixture {
	t.Helper()
	addrs := startCluster(t).Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &fixture{addrs: addrs, ctx: ctx, preds: readPredictions(t, ctx, addrs), stream: newStreamWriter(t, addrs, seed)}
}

// feed writes n examples of the stream (and the labels that fall due)
// steps times, each time waiting for their predictions and, when solves
// is set, for a solve of svc.
func (f *fixture) feed(t *testing.T, svc *Service, steps, n int, solves bool) []string {
	t.Helper()
	var all []string
	for range steps {
		v := svc.Pipeline().Learner().InForce().Stamp.Version
		ids := f.stream.write(t, f.ctx, n)
		waitFor(t, "predictions", time.Minute, func() bool { return f.preds.has(ids) == len(ids) })
		if solves {
			waitFor(t, "a solve", 30*time.Second, func() bool { return svc.Pipeline().Learner().InForce().Stamp.Version > v })
		}
		all = append(all, ids...)
	}
	return all
}

// testConnection connects bc to the brokers at addrs and closes the
// connection when the test ends.
func testConnection(t *testing.T, bc brokers.Config, addrs []string) *brokers.Connection {
	t.Helper()
	conn, err := bc.Connect(addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// newTestTransport returns a kafka-go transport that is closed when the
// test ends: left open, its metadata refresh would dial the test's cluster
// for the rest of the test binary's life.
func newTestTransport(t *testing.T) *kafka.Transport {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// write produces n more examples and the labels that fall due.
func (s *streamWriter) write(t *testing.T, ctx context.Context, n int) []string {
	t.Helper()
	if !s.created {
		createTopics(t, ctx, s.w.Addr, "examples", "labels")
		s.created = true
	}
	var ids []string
	var msgs []kafka.Message
	for range n {
		d := s.gen.Next()
		v, _ := json.Marshal(map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text})
		msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte(d.ID), Value: v})
		ids = append(ids, d.ID)
		s.truth[d.ID] = d.Label
		if s.n%s.rate == 0 {
			label := d.Label
			if s.relabel != nil {
				label = s.relabel(label)
			}
			l, _ := json.Marshal(map[string]string{"id": d.ID, "label": label})
			s.queued = append(s.queued, kafka.Message{Topic: "labels", Key: []byte(d.ID), Value: l, Time: time.Unix(int64(s.n+s.delay), 0)})
		}
		s.n++
		for len(s.queued) > 0 && s.queued[0].Time.Unix() <= int64(s.n) {
			m := s.queued[0]
			m.Time = time.Time{}
			msgs = append(msgs, m)
			s.queued = s.queued[1:]
			s.labels++
			s.labeled[string(m.Key)] = string(m.Value)
		}
	}
	if err := s.w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	return ids
}

// createTopics creates the topics, with the cluster's default partitions,
// unless they exist. A writer's first write could otherwise create them
// (AllowAutoTopicCreation), but kafka-go's transport may route it by a
// metadata snapshot taken before they existed: every message of the write
// then failed with "topic not found" (seen once in the CI's -race run).
func createTopics(t *testing.T, ctx context.Context, addr net.Addr, names ...string) {
	t.Helper()
	req := &kafka.CreateTopicsRequest{}
	for _, name := range names {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: name, NumPartitions: -1, ReplicationFactor: -1})
	}
	resp, err := (&kafka.Client{Addr: addr, Transport: newTestTransport(t)}).CreateTopics(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			t.Fatalf("create topic %s: %v", name, err)
		}
	}
}

// predictionLog reads the predictions topic in the background.
type predictionLog struct {
	mu    sync.Mutex
	byID  map[string][]pipeline.Prediction
	order map[int][]pipeline.Prediction // per partition, in offset order
}

func readPredictions(t *testing.T, ctx context.Context, addrs []string) *predictionLog {
	t.Helper()
	l := &predictionLog{byID: map[string][]pipeline.Prediction{}, order: map[int][]pipeline.Prediction{}}
	ctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, p := range predictionPartitions(ctx, addrs) {
			wg.Go(func() { l.readPartition(ctx, t, addrs, p) })
		}
	})
	t.Cleanup(func() { stop(); wg.Wait() })
	return l
}

// predictionPartitions waits for the predictions topic and returns its
// partitions; nil if ctx ends first. The log reads each by assignment,
// outside any consumer group, so that what it sees depends only on the
// service: a group reader of its own could stall in a rebalance and look
// like a service that lost predictions.
func predictionPartitions(ctx context.Context, addrs []string) []int {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if conn, err := kafka.DialContext(ctx, "tcp", addrs[0]); err == nil {
			parts, err := conn.ReadPartitions("predictions")
			conn.Close()
			if err == nil && len(parts) > 0 {
				ids := make([]int, len(parts))
				for i, p := range parts {
					ids[i] = p.ID
				}
				return ids
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// readPartition adds the predictions of one partition to the log until
// ctx ends.
func (l *predictionLog) readPartition(ctx context.Context, t *testing.T, addrs []string, partition int) {
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "predictions", Partition: partition, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		t.Errorf("predictions partition %d: %v", partition, err)
		return
	}
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return
		}
		var p pipeline.Prediction
		if err := json.Unmarshal(m.Value, &p); err != nil {
			t.Errorf("prediction %s: %v", m.Value, err)
			continue
		}
		if string(m.Key) != p.ID {
			t.Errorf("prediction keyed %q for id %q", m.Key, p.ID)
		}
		l.mu.Lock()
		l.byID[p.ID] = append(l.byID[p.ID], p)
		l.order[m.Partition] = append(l.order[m.Partition], p)
		l.mu.Unlock()
	}
}

func (l *predictionLog) has(ids []string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, id := range ids {
		if len(l.byID[id]) > 0 {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runService starts a service and returns a function that stops it and
// returns Run's result.
func runService(t *testing.T, cfg config.Config) (*Service, func() error) {
	t.Helper()
	r := startService(t, cfg, testLogger(t))
	return r.svc, r.stop
}

// running is a service started by a test.
type running struct {
	svc    *Service
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	result error
}

// startService runs a service logging to log until the test stops it (or
// ends).
func startService(t *testing.T, cfg config.Config, log *slog.Logger) *running {
	t.Helper()
	svc, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{svc: svc, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- svc.Run(ctx) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop cancels the service's context and returns Run's result.
func (r *running) stop() error {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.result = <-r.done:
		case <-time.After(30 * time.Second):
			r.result = fmt.Errorf("service did not stop within 30s")
		}
	})
	return r.result
}

// exited reports whether Run returned before stop was called.
func (r *running) exited() bool {
	select {
	case r.result = <-r.done:
		r.once.Do(func() {}) // stop has nothing left to wait for
		return true
	default:
		return false
	}
}

func TestServiceEndToEndWithRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	ctx, preds, stream := f.ctx, f.preds, f.stream

	// First run: the whole first part of the stream, in steps, so that
	// solves land between them.
	cfg := testConfig(t, f.addrs)
	svc, stop := runService(t, cfg)
	first := f.feed(t, svc, 8, 100, true)
	waitFor(t, "a snapshot", 30*time.Second, func() bool { return svc.Status().Snapshots > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st := svc.Status()
	if st.Pipeline.Solves == 0 || st.Pipeline.ModelVersion == 0 {
		t.Fatalf("no model after the first run: %+v", st.Pipeline)
	}
	checkVersionsIncrease(t, preds)

	// Second run, stopped mid-stream.
	svc2, stop2 := runService(t, cfg)
	<-svc2.Started()
	if svc2.Status().RestoredVersion == 0 || svc2.Status().Rebuilt == 0 {
		t.Fatalf("second run did not restore: %+v", svc2.Status())
	}
	second := stream.write(t, ctx, 600)
	waitFor(t, "some predictions of the second part", time.Minute, func() bool { return preds.has(second) > 100 })
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	third := stream.write(t, ctx, 300)

	// Third run: resumes and catches up.
	svc3, _ := runService(t, cfg)
	<-svc3.Started()
	if v := svc3.Status().RestoredVersion; v < st.Pipeline.ModelVersion {
		t.Fatalf("third run restored version %d, older than the first run's last %d", v, st.Pipeline.ModelVersion)
	}
	all := append(append(append([]string{}, first...), second...), third...)
	waitFor(t, "a prediction for every example", time.Minute, func() bool { return preds.has(all) == len(all) })
	if window, _ := svc3.Pipeline().Learner().WindowSize(); window < 350 {
		t.Fatalf("window holds %d examples after the restart, want it rebuilt", window)
	}
}

// TestLabelsAfterARestartGradeTheExamplesBeforeIt: labels that come after
// a restart for examples read before it are scored prequentially against
// the restored model's predictions, not passed over as unscored.
func TestLabelsAfterARestartGradeTheExamplesBeforeIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	cfg := testConfig(t, f.addrs)
	svc, stop := runService(t, cfg)
	f.feed(t, svc, 4, 100, true)
	waitFor(t, "a snapshot", 30*time.Second, func() bool { return svc.Status().Snapshots > 0 })
	// Examples whose labels all come after the restart.
	stream := f.stream
	stream.rate, stream.delay = 1, 1_000_000
	stream.queued = nil
	late := f.feed(t, svc, 1, 40, false)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	svc2, _ := runService(t, cfg)
	<-svc2.Started()
	before := svc2.Status().Pipeline
	for i := range stream.queued {
		stream.queued[i].Time = time.Time{}
	}
	if err := stream.w.WriteMessages(f.ctx, stream.queued...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the late labels", time.Minute, func() bool { return svc2.Status().Pipeline.Labels >= before.Labels+int64(len(late)) })
	after := svc2.Status().Pipeline
	if got := after.SSL.Total - before.SSL.Total; got != len(late) || after.Unscored != before.Unscored {
		t.Fatalf("%d labels after the restart graded, %d unscored, want %d and %d", got, after.Unscored-before.Unscored, len(late), 0)
	}
}

// checkVersionsIncrease checks that model versions never go back within a
// partition of the predictions topic, and that they grew.
func checkVersionsIncrease(t *testing.T, l *predictionLog) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	grew := false
	for p, preds := range l.order {
		for i := 1; i < len(preds); i++ {
			if preds[i].ModelVersion < preds[i-1].ModelVersion {
				t.Fatalf("partition %d: model version went from %d back to %d", p, preds[i-1].ModelVersion, preds[i].ModelVersion)
			}
		}
		if len(preds) > 0 && preds[len(preds)-1].ModelVersion > preds[0].ModelVersion {
			grew = true
		}
	}
	if !grew {
		t.Fatal("model version never increased")
	}
}

func kafkaMessage(topic, key, value string) kafka.Message {
	return kafka.Message{Topic: topic, Key: []byte(key), Value: []byte(value)}
}

// TestRunRefusesTheEmbeddedBrokerList: the service does not start the
// in-process cluster that kafka.brokers [embedded] names (streamer run
// does, and gives the service its addresses); Run says so, naming the key.
func TestRunRefusesTheEmbeddedBrokerList(t *testing.T) {
	t.Parallel()
	svc, err := New(testConfig(t, []string{"embedded"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "kafka.brokers") {
		t.Fatalf("Run = %v, want an error naming kafka.brokers", err)
	}
}
