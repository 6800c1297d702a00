package replay

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/ingest"
	"streamer/offline"
	"streamer/online/train"
	"streamer/pipeline"
	"streamer/publish"
	"streamer/snapshot"
	"streamer/synth"
)

var epoch = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

type fixture struct {
	conn  *brokers.Connection
	cfg   config.Config
	jsonl string // the same examples as a file
	ids   []string
}

// newFixture starts a cluster and produces n examples on 2 partitions, one
// a second from epoch, a tenth carrying their label, and a late label for
// another tenth.
func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	cluster, err := embedded.Start(embedded.Config{Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	cfg, err := config.Load("", []string{
		"features.dim=16384", "window.max_examples=300", "window.k=5",
		"schedule.solve_examples=100", "schedule.solve_labels=10",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kafka.Brokers = cluster.Addrs()
	conn, err := cfg.Brokers().Connect(cluster.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	f := &fixture{conn: conn, cfg: cfg, jsonl: filepath.Join(t.TempDir(), "examples.jsonl")}
	var file bytes.Buffer
	var msgs []kafka.Message
	gen := synth.NewTextStream(synth.TextStreamConfig{Seed: 5, Topics: 2})
	for i := range n {
		d := gen.Next()
		rec := map[string]string{"id": d.ID, "ts": d.TS.Format(time.RFC3339), "text": d.Text}
		if i%10 == 0 {
			rec["label"] = d.Label
		}
		v, _ := json.Marshal(rec)
		file.Write(append(v, '\n'))
		at := epoch.Add(time.Duration(i) * time.Second)
		msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte(d.ID), Value: v, Time: at})
		if i%10 == 5 {
			l, _ := json.Marshal(map[string]string{"id": d.ID, "label": d.Label})
			msgs = append(msgs, kafka.Message{Topic: "labels", Key: []byte(d.ID), Value: l, Time: at.Add(20 * time.Second)})
		}
		f.ids = append(f.ids, d.ID)
	}
	msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte("bad"), Value: []byte(`{"id": 7}`), Time: epoch.Add(time.Duration(n) * time.Second)})
	if err := os.WriteFile(f.jsonl, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, AllowAutoTopicCreation: true}
	defer w.Close()
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) config(t *testing.T) Config {
	t.Helper()
	pc, err := f.cfg.Pipeline()
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Topics:   Topics{Examples: "examples", Labels: "labels", ExamplesDLQ: "examples-dlq", LabelsDLQ: "labels-dlq"},
		From:     Bound{Offset: 0},
		To:       Bound{End: true},
		Pipeline: pc,
	}
}

// fit returns a model fitted, as streamer fit would, on the fixture's
// examples that carry their label.
func (f *fixture) fit(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	fit, err := offline.RunFit(context.Background(), offline.FitConfig{
		Data: f.jsonl, Features: ingest.Featurizer{Dim: 16384}, Params: train.Params{Algorithm: train.SVM},
	})
	if err != nil {
		t.Fatal(err)
	}
	return fit.Snapshot
}

func (f *fixture) replayToFile(t *testing.T, cfg Config) (Summary, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	out, err := NewFileOutput(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Out = out
	sum, err := Run(context.Background(), f.conn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sum, data
}

func decodeLines(t *testing.T, data []byte) map[string]pipeline.Prediction {
	t.Helper()
	out := map[string]pipeline.Prediction{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var p pipeline.Prediction
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out[p.ID] = p
	}
	return out
}

func TestPinnedReplayMatchesPredict(t *testing.T) {
	f := newFixture(t, 400)
	snap := f.fit(t)
	cfg := f.config(t)
	cfg.Snapshot = snap
	sum, data := f.replayToFile(t, cfg)
	if sum.Predictions != 400 || sum.BadRecords != 1 || sum.Accuracy == nil {
		t.Fatalf("summary %+v", sum)
	}
	var want bytes.Buffer
	if _, err := offline.Predict(snap, f.jsonl, &want); err != nil {
		t.Fatal(err)
	}
	got, exp := decodeLines(t, data), decodeLines(t, want.Bytes())
	if len(got) != len(exp) {
		t.Fatalf("%d replayed predictions, predict gave %d", len(got), len(exp))
	}
	for id, p := range exp {
		g := got[id]
		g.Source, p.Source = pipeline.Source{}, pipeline.Source{}
		if !reflect.DeepEqual(g, p) {
			t.Fatalf("%s: replay %+v, predict %+v", id, g, p)
		}
	}
}

// TestPinnedReplayOfNothingNamesItsModel replays an empty range: the
// summary still names the pinned model, which scored nothing.
func TestPinnedReplayOfNothingNamesItsModel(t *testing.T) {
	f := newFixture(t, 50)
	snap := f.fit(t)
	snap.Version = 6
	cfg := f.config(t)
	cfg.Snapshot = snap
	cfg.From = Bound{Offset: 1000}
	sum, data := f.replayToFile(t, cfg)
	if sum.Records != 0 || len(data) != 0 || sum.ModelVersion != 6 {
		t.Fatalf("summary %+v, %d bytes out; want no records and model version 6", sum, len(data))
	}
}

func TestRetrainReplayIsDeterministic(t *testing.T) {
	f := newFixture(t, 600)
	cfg := f.config(t)
	cfg.Retrain = true
	s1, a := f.replayToFile(t, cfg)
	s2, b := f.replayToFile(t, cfg)
	if !bytes.Equal(a, b) {
		t.Fatal("two retraining replays of the same range differ")
	}
	if s1.ModelVersion == 0 || s1.Predictions != 600 || s1.Labeled == 0 {
		t.Fatalf("summary %+v", s1)
	}
	if s1.ModelVersion != s2.ModelVersion {
		t.Fatalf("model versions %d and %d", s1.ModelVersion, s2.ModelVersion)
	}
	// The summary names the model in force at the end, which may have
	// been solved after the last prediction.
	var last uint64
	for _, p := range decodeLines(t, a) {
		last = max(last, p.ModelVersion)
	}
	if s1.ModelVersion < last {
		t.Fatalf("summary says model version %d, yet a prediction was made by %d", s1.ModelVersion, last)
	}
}

func TestReplayLeavesTheLiveGroupAlone(t *testing.T) {
	f := newFixture(t, 200)
	ctx := context.Background()
	// The live group consumes and commits part of the topic.
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: f.conn.Addrs, GroupID: "streamer", Topic: "examples", StartOffset: kafka.FirstOffset})
	for range 50 {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	before, err := f.conn.CommittedOffsets(ctx, "streamer", "examples", []int{0, 1})
	if err != nil || len(before) == 0 {
		t.Fatalf("committed %v, %v", before, err)
	}
	cfg := f.config(t)
	cfg.Retrain = true
	f.replayToFile(t, cfg)
	after, err := f.conn.CommittedOffsets(ctx, "streamer", "examples", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("committed offsets moved from %v to %v", before, after)
	}
}

func TestTimeRangeResolvesToOffsets(t *testing.T) {
	f := newFixture(t, 300)
	ctx := context.Background()
	from, to := epoch.Add(100*time.Second), epoch.Add(200*time.Second)
	ranges, err := Resolve(ctx, f.conn, "examples", []int{0, 1}, Bound{Time: from, isTime: true}, Bound{Time: to, isTime: true})
	if err != nil {
		t.Fatal(err)
	}
	// Check against the records themselves: [From, To) holds exactly the
	// records of each partition whose time is in [from, to).
	total := 0
	for _, r := range ranges {
		times := partitionTimes(t, f.conn, r.Partition)
		for off, at := range times {
			in := !at.Before(from) && at.Before(to)
			if in != (int64(off) >= r.From && int64(off) < r.To) {
				t.Fatalf("partition %d offset %d at %v: in range %v, resolved [%d, %d)", r.Partition, off, at, in, r.From, r.To)
			}
			if in {
				total++
			}
		}
	}
	if total != 100 {
		t.Fatalf("%d records in the time range, want 100", total)
	}
	if _, err := ParseBound("yesterday", true); err == nil {
		t.Fatal("a bad bound parsed")
	}
}

func partitionTimes(t *testing.T, conn *brokers.Connection, p int) []time.Time {
	t.Helper()
	ranges, err := conn.Offsets(context.Background(), "examples", []int{p})
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	err = conn.ReadRange(context.Background(), "examples", p, 0, ranges[p].End, func(m kafka.Message) error {
		times = append(times, m.Time)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return times
}

func TestInterruptedReplaySaysHowFar(t *testing.T) {
	f := newFixture(t, 300)
	cfg := f.config(t)
	cfg.Retrain = true
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = func(done, total int64) {
		if done >= 100 {
			cancel()
		}
	}
	out, err := NewFileOutput(filepath.Join(t.TempDir(), "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Out = out
	sum, err := Run(ctx, f.conn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Records >= 300 || len(sum.Reached) == 0 {
		t.Fatalf("summary %+v", sum)
	}
}

// TestReplayCreatesItsOutputTopic replays into a topic that does not exist
// yet: it is created, as the service creates what it writes to.
// TestReplayCreatesItsOutputTopic: a replay to a missing topic creates
// it and writes a record per prediction, in the format asked for (Avro in
// Confluent's wire format here).
func TestReplayCreatesItsOutputTopic(t *testing.T) {
	f := newFixture(t, 100)
	ctx := context.Background()
	const schemaID = 9
	out, err := NewTopicOutput(ctx, f.conn, "backfill", 2, publish.Format{Avro: true, SchemaID: schemaID})
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.config(t)
	cfg.Retrain = true
	cfg.Out = out
	sum, err := Run(ctx, f.conn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := f.conn.Partitions(ctx, "backfill")
	if err != nil || len(parts) != 2 {
		t.Fatalf("backfill partitions %v, %v", parts, err)
	}
	ranges, err := f.conn.Offsets(ctx, "backfill", parts)
	if err != nil {
		t.Fatal(err)
	}
	schema := avro.MustParse(pipeline.PredictionAvroSchema)
	var written int64
	for part, r := range ranges {
		written += r.End - r.First
		err := f.conn.ReadRange(ctx, "backfill", part, r.First, r.End, func(m kafka.Message) error {
			var p struct {
				ID string `avro:"id"`
			}
			if m.Value[0] != 0 || binary.BigEndian.Uint32(m.Value[1:5]) != schemaID {
				return fmt.Errorf("record %q: header % x, want schema %d", m.Key, m.Value[:5], schemaID)
			}
			if err := avro.Unmarshal(schema, m.Value[5:], &p); err != nil || p.ID != string(m.Key) {
				return fmt.Errorf("record %q: %+v, %v", m.Key, p, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if written != sum.Predictions || written == 0 {
		t.Fatalf("%d records on the new topic, %d predictions", written, sum.Predictions)
	}
}

// TestPinnedReplayRoutesAndExplains: a pinned model's predictions are
// marked for review below their class's threshold and explained, as the
// service's scorers mark and explain them.
func TestPinnedReplayRoutesAndExplains(t *testing.T) {
	f := newFixture(t, 200)
	snap := f.fit(t)
	cfg := f.config(t)
	cfg.Snapshot = snap
	class := snap.Model.Classes[0]
	cfg.Pipeline.Review.Thresholds = map[string]float64{class: 0.9}
	cfg.Pipeline.Explain = 2
	_, data := f.replayToFile(t, cfg)
	routed := 0
	for id, p := range decodeLines(t, data) {
		if want := *p.Label == class && *p.Prob < 0.9; p.Review != want {
			t.Errorf("%s: %s at %v, review %v", id, *p.Label, *p.Prob, p.Review)
		}
		if p.Review {
			routed++
		}
		e := p.Explanation
		if e == nil || e.Class != *p.Label || len(e.Terms) != 2 {
			t.Fatalf("%s: explanation %+v, want 2 terms of %s", id, e, *p.Label)
		}
		for _, term := range e.Terms {
			if term.Contribution != 0 && len(term.Names) == 0 {
				t.Fatalf("%s: term %+v without the words hashed there", id, term)
			}
		}
		sum := e.Bias + e.Rest
		for _, term := range e.Terms {
			sum += term.Contribution
		}
		if math.Abs(sum-e.Score) > 1e-9*(1+math.Abs(e.Score)) || e.Score != p.Scores[*p.Label] {
			t.Fatalf("%s: terms, bias and rest add to %v, score %v, prediction's score %v", id, sum, e.Score, p.Scores[*p.Label])
		}
	}
	if routed == 0 {
		t.Fatalf("no prediction of %s below 0.9 was routed", class)
	}
}

// refusingOutput refuses every prediction.
type refusingOutput struct{}

func (refusingOutput) Write(context.Context, *pipeline.Prediction) error {
	return errors.New("output refused")
}
func (refusingOutput) Close(context.Context) error { return nil }

// TestFailedReplayJoinsItsReaders: a replay that returns early on an error
// has stopped and waited for its partition readers.
func TestFailedReplayJoinsItsReaders(t *testing.T) {
	f := newFixture(t, 2000)
	cfg := f.config(t)
	cfg.Retrain = true
	cfg.Out = refusingOutput{}
	if _, err := Run(context.Background(), f.conn, cfg); err == nil || !strings.Contains(err.Error(), "output refused") {
		t.Fatalf("err = %v, want the output's", err)
	}
	if n := runningIn("streamer/replay.readRange("); n > 0 {
		t.Fatalf("%d partition readers outlive Run", n)
	}
}

// runningIn counts the goroutines whose stack has a frame of fn.
func runningIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), fn)
		}
		buf = make([]byte, 2*len(buf))
	}
}
