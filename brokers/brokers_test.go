package brokers

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers/embedded"
)

func startTestCluster(t *testing.T, cfg embedded.Config) *embedded.Cluster {
	t.Helper()
	c, err := embedded.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// connectTestCluster starts an embedded cluster for the test, connects to
// it and creates topics.
func connectTestCluster(t *testing.T, ctx context.Context, topics ...Topic) *Connection {
	t.Helper()
	cluster := startTestCluster(t, embedded.Config{})
	conn, err := Config{Brokers: []string{Embedded}}.Connect(cluster.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	if err := conn.EnsureTopics(ctx, topics...); err != nil {
		t.Fatal(err)
	}
	return conn
}

func TestEmbeddedClusterRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connectTestCluster(t, ctx, Topic{Name: "in", Partitions: 3}, Topic{Name: "snaps", Compacted: true})
	if err := conn.EnsureTopics(ctx, Topic{Name: "in", Partitions: 3}); err != nil {
		t.Fatalf("ensuring an existing topic: %v", err)
	}
	parts, err := conn.Partitions(ctx, "in")
	if err != nil || len(parts) != 3 {
		t.Fatalf("partitions %v, %v", parts, err)
	}
	start := time.Now()
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "in", Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	var msgs []kafka.Message
	for i := range 30 {
		msgs = append(msgs, kafka.Message{Key: []byte{byte(i)}, Value: []byte("x")})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ranges, err := conn.Offsets(ctx, "in", parts)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, r := range ranges {
		total += r.End - r.First
	}
	if total != 30 {
		t.Fatalf("offset ranges %v hold %d records, want 30", ranges, total)
	}
	before, err := conn.OffsetsForTime(ctx, "in", parts, start.Add(-time.Hour).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	for p, off := range before {
		if off != ranges[p].First {
			t.Fatalf("partition %d: offset for an early time %d, want %d", p, off, ranges[p].First)
		}
	}
	after, err := conn.OffsetsForTime(ctx, "in", parts, time.Now().Add(time.Hour).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	for p, off := range after {
		if off != -1 && off != ranges[p].End {
			t.Fatalf("partition %d: offset for a late time %d", p, off)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg Config
		ok  bool
	}{
		{Config{Brokers: []string{"localhost:9092"}}, true},
		{Config{Brokers: []string{Embedded}}, true},
		{Config{}, true}, // no cluster named: refused by what connects
		{Config{Brokers: []string{Embedded, "x:1"}}, false},
		{Config{Brokers: []string{"x:1"}, SASL: SASLConfig{Mechanism: "gssapi", Username: "u"}}, false},
		{Config{Brokers: []string{"x:1"}, SASL: SASLConfig{Mechanism: "plain"}}, false},
		{Config{Brokers: []string{"x:1"}, TLS: TLSConfig{CertFile: "c.pem"}}, false},
	}
	for _, tt := range tests {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: Validate = %v, want ok=%v", tt.cfg, err, tt.ok)
		}
	}
}
