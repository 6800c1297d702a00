package servicebench

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/pipeline"
)

// filledCluster starts a cluster of two partitions with n examples, a
// fifth of them labeled.
func filledCluster(t *testing.T, n int, extra ...string) *benchCluster {
	t.Helper()
	bc, err := fillCluster(t.Context(), 2, extra, DrainConfig{Examples: n, LabelRate: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bc.Close)
	return bc
}

// commitEnd commits the end of every partition of topic for group.
func commitEnd(t *testing.T, bc *benchCluster, group, topic string) {
	t.Helper()
	ps, err := bc.conn.Positions(t.Context(), group, topic)
	if err != nil {
		t.Fatal(err)
	}
	var offsets []kafka.OffsetCommit
	for _, p := range ps {
		offsets = append(offsets, kafka.OffsetCommit{Partition: p.Partition, Offset: p.End})
	}
	_, err = bc.conn.Client().OffsetCommit(t.Context(), &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{topic: offsets}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFillWritesExamplesAndLabels: the filled topics hold every example
// and the labels of the given fraction.
func TestFillWritesExamplesAndLabels(t *testing.T) {
	bc := filledCluster(t, 100)
	topics := bc.config.Kafka.Topics
	for _, c := range []struct {
		topic string
		want  int64
	}{{topics.Examples, 100}, {topics.Labels, 20}} {
		ps, err := bc.conn.Positions(t.Context(), "nobody", c.topic)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, p := range ps {
			n += p.End - p.First
		}
		if n != c.want {
			t.Errorf("%s holds %d records, want %d", c.topic, n, c.want)
		}
	}
}

// TestWaitCommitted: the wait ends once the group has committed every
// partition's end, fails at its timeout before, and fails at once when a
// service it watches exits.
func TestWaitCommitted(t *testing.T) {
	bc := filledCluster(t, 50)
	ctx, examples := t.Context(), bc.config.Kafka.Topics.Examples
	if err := waitCommitted(ctx, bc.conn, "g", []string{examples}, 200*time.Millisecond); err == nil ||
		!strings.Contains(err.Error(), "50 records not committed") {
		t.Fatalf("wait with nothing committed: %v", err)
	}
	gone := startFake(t, "fake.exit=0")
	start := time.Now()
	if err := waitCommitted(ctx, bc.conn, "g", []string{examples}, time.Minute, gone); err == nil ||
		!strings.Contains(err.Error(), "exited") || time.Since(start) > 30*time.Second {
		t.Fatalf("wait on a service that exited: %v after %v", err, time.Since(start))
	}
	commitEnd(t, bc, "g", examples)
	if err := waitCommitted(ctx, bc.conn, "g", []string{examples}, time.Minute, gone); err != nil {
		t.Fatalf("wait with every partition committed: %v", err)
	}
}

// TestScorersStopWhenOneExits: a scale run whose scorers exit ends with
// an error instead of waiting for commits that cannot come, and leaves no
// process behind.
func TestScorersStopWhenOneExits(t *testing.T) {
	bc := filledCluster(t, 20)
	t.Setenv(asFakeService, "1")
	exe := os.Args[0]
	cfg := ScaleConfig{Executable: exe, Examples: 20, Timeout: time.Minute}
	_, err := scorers(t.Context(), cfg, append(bc.sets, "fake.exit=1"), bc.conn, bc.config.Kafka.Topics.Examples, 2)
	if err == nil || !strings.Contains(err.Error(), "2 scorers") || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("scorers that exit: %v", err)
	}
}

// TestStreamedExamplesAndTheirPublishTimes streams examples for a moment,
// and reads their first times back, sorted, one per key.
func TestStreamedExamplesAndTheirPublishTimes(t *testing.T) {
	bc := filledCluster(t, 0)
	ctx := t.Context()
	const topic = "streamed"
	if err := bc.conn.EnsureTopics(ctx, brokers.Topic{Name: topic, Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	streamCtx, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if err := streamExamples(streamCtx, bc.conn, topic, 1000); err != nil {
		t.Fatal(err)
	}
	times, err := publishTimes(ctx, bc.conn, topic, start)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) < 10 || !slices.IsSorted(times) || times[0] < 0 || times[len(times)-1] > float64(time.Minute/time.Millisecond) {
		t.Fatalf("%d publish times, first %v", len(times), times[:min(3, len(times))])
	}
}

// TestPredictionSource reads the input partition of a prediction, and
// refuses a record that is not one.
func TestPredictionSource(t *testing.T) {
	var p pipeline.Prediction
	p.Source.Partition = 3
	v, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := predictionSource(kafka.Message{Value: v}); err != nil || got != 3 {
		t.Errorf("predictionSource = %d, %v; want 3", got, err)
	}
	if _, err := predictionSource(kafka.Message{Value: []byte("{"), Offset: 9}); err == nil || !strings.Contains(err.Error(), "offset 9") {
		t.Errorf("predictionSource of a bad record: %v", err)
	}
}
