package brokers

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/snapshot"
)

// TestReadSnapshots writes two chunked versions of a model and a record
// that is no snapshot's to the snapshot topic, and reads them back: the
// newest complete one, one version by number, and a missing version.
func TestReadSnapshots(t *testing.T) {
	cluster := startTestCluster(t, ClusterConfig{})
	conn, err := Config{Brokers: []string{Embedded}}.Connect(cluster.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.EnsureTopics(ctx, Topic{Name: "snaps", Compacted: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, err := conn.ReadSnapshots(ctx, "snaps", "m"); err != nil || ok {
		t.Fatalf("empty topic: ok %v, err %v", ok, err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "snaps",
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	data := map[uint64][]byte{}
	msgs := []kafka.Message{{Key: []byte("junk"), Value: []byte("not a snapshot")}}
	for v := uint64(1); v <= 2; v++ {
		if data[v], err = snapshot.Encode(&snapshot.Snapshot{Name: "m", Version: v}); err != nil {
			t.Fatal(err)
		}
		for _, r := range snapshot.Split("m", snapshot.Stamp{Version: v}, data[v], 16) {
			m := kafka.Message{Key: []byte(r.Key), Value: r.Value}
			for k, h := range r.Headers {
				m.Headers = append(m.Headers, kafka.Header{Key: k, Value: []byte(h)})
			}
			msgs = append(msgs, m)
		}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	c, ok, skipped, err := conn.ReadSnapshots(ctx, "snaps", "m")
	if err != nil || !ok || c.Version != 2 || !bytes.Equal(c.Data, data[2]) || skipped != 1 {
		t.Fatalf("newest: version %d, ok %v, skipped %d, err %v", c.Version, ok, skipped, err)
	}
	got, err := conn.ReadSnapshotVersion(ctx, "snaps", "m", 1)
	if err != nil || !bytes.Equal(got, data[1]) {
		t.Fatalf("version 1: %q, %v", got, err)
	}
	if _, err := conn.ReadSnapshotVersion(ctx, "snaps", "m", 3); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("version 3: %v, want ErrNoSnapshot", err)
	}
}
