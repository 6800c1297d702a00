package servicebench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestBacklogCapHoldsProducers: wait holds a producer while the backlog is
// above the bound, lets it go once the service's count catches up, and
// gives up when its context ends.
func TestBacklogCapHoldsProducers(t *testing.T) {
	b := &backlogCap{max: 1000}
	b.produced.Store(1500)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan bool, 1)
	go func() { done <- b.wait(ctx) }()
	select {
	case <-done:
		t.Fatal("wait returned with a backlog of 1500 over a bound of 1000")
	case <-time.After(3 * backlogPoll):
	}
	b.predicted.Store(500)
	if !<-done {
		t.Fatal("wait reported an ended context once the backlog was at its bound")
	}
	if b.held.Load() <= 0 {
		t.Errorf("held = %d ns after a wait", b.held.Load())
	}

	b.produced.Store(5000)
	go func() { done <- b.wait(ctx) }()
	cancel()
	if <-done {
		t.Error("wait reported true after its context ended")
	}
}

// TestBacklogCapUnbounded: a zero bound never holds a producer.
func TestBacklogCapUnbounded(t *testing.T) {
	b := &backlogCap{}
	b.produced.Store(1 << 40)
	if !b.wait(t.Context()) {
		t.Error("wait = false with no bound and a live context")
	}
	if b.held.Load() != 0 {
		t.Errorf("held = %d ns with no bound", b.held.Load())
	}
}

// TestBacklogCapFollowsMetrics: follow sums the service's per-partition
// prediction counters and stops with its context.
func TestBacklogCapFollowsMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE streamer_predictions_published_total counter\n"+
			"streamer_predictions_published_total{partition=\"0\"} 7\n"+
			"streamer_predictions_published_total{partition=\"1\"} 5\n"+
			"streamer_solves_total{result=\"ok\"} 3\n")
	}))
	defer srv.Close()
	b := &backlogCap{max: 1}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		b.follow(ctx, srv.URL)
	}()
	for deadline := time.Now().Add(10 * time.Second); b.predicted.Load() != 12; time.Sleep(backlogPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("predicted = %d, want 12", b.predicted.Load())
		}
	}
	cancel()
	<-stopped
}

// TestTrimDropsWhatWasRead: trimOnce deletes the examples below the
// group's committed offset and no further, leaves a partition the group
// never committed alone, and deletes every prediction.
func TestTrimDropsWhatWasRead(t *testing.T) {
	ctx := t.Context()
	bc, err := startBenchCluster(ctx, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	topics, group := bc.config.Kafka.Topics, bc.config.Kafka.Group
	tr := &kafka.Transport{} // closed at the end: its metadata refresh would outlive the cluster
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(bc.cluster.Addrs()...), Balancer: &kafka.RoundRobin{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, AllowAutoTopicCreation: true, Transport: tr}
	defer w.Close()
	var msgs []kafka.Message
	for i := range 20 {
		msgs = append(msgs, kafka.Message{Topic: topics.Examples, Value: fmt.Appendf(nil, "e%d", i)})
	}
	msgs = append(msgs, kafka.Message{Topic: topics.Predictions, Value: []byte("p")})
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	_, err = bc.conn.Client().OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{topics.Examples: {{Partition: 0, Offset: 6}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := bc.trimOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic           string
		partition       int32
		wantFirst, want int64
	}{{topics.Examples, 0, 6, 10}, {topics.Examples, 1, 0, 10}} {
		pi := bc.cluster.PartitionInfo(c.topic, c.partition)
		if pi == nil || pi.LogStartOffset != c.wantFirst || pi.HighWatermark != c.want {
			t.Errorf("%s/%d after trim: %+v, want records %d to %d", c.topic, c.partition, pi, c.wantFirst, c.want)
		}
	}
	for _, pi := range bc.cluster.PartitionInfos(topics.Predictions) {
		if pi.LogStartOffset != pi.HighWatermark {
			t.Errorf("predictions/%d after trim: records %d to %d, want none", pi.Partition, pi.LogStartOffset, pi.HighWatermark)
		}
	}
}
