package publish

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/snapshot"
)

// announceCluster starts an embedded cluster with the versions topic and
// returns a connection to it; both end with the test.
func announceCluster(tb testing.TB, ctx context.Context) *brokers.Connection {
	tb.Helper()
	cluster, err := embedded.Start(embedded.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cluster.Close)
	conn, err := brokers.Config{}.Connect(cluster.Addrs())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(conn.Close)
	if err := conn.EnsureTopics(ctx, brokers.Topic{Name: "versions"}); err != nil {
		tb.Fatal(err)
	}
	return conn
}

// TestAnnouncementsRoundTrip announces versions of two models, then more
// of another model than a page of NewestAnnounced: the announcements of
// each model read back in order, and the newest epoch and version of a
// model are found pages back from the end.
func TestAnnouncementsRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := announceCluster(t, ctx)
	w := NewAnnouncementWriter(conn, "versions")
	defer w.Close()
	if _, _, found, err := conn.NewestAnnounced(ctx, "versions", "a"); found || err != nil {
		t.Fatalf("an empty topic: found %v, err %v", found, err)
	}
	if _, _, found, err := conn.NewestAnnounced(ctx, "no-such-topic", "a"); found || err != nil {
		t.Fatalf("a topic that does not exist: found %v, err %v", found, err)
	}
	for _, st := range []snapshot.Stamp{{Epoch: 0, Version: 1}, {Epoch: 0, Version: 2}, {Epoch: 2, Version: 3}, {Epoch: 1, Version: 9}} {
		a := snapshot.Announcement{Name: "a", Epoch: st.Epoch, Version: st.Version, CreatedAt: time.Now().UTC(), Window: int(st.Version) * 10, Origin: snapshot.OriginSolve}
		if err := w.Announce(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// Another model's announcements, more than a page, and a record
	// that is none, written in batches.
	bulk := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "versions", BatchSize: 500, BatchTimeout: time.Millisecond,
		RequiredAcks: kafka.RequireAll} // acknowledged: on the topic when WriteMessages returns
	defer bulk.Close()
	var msgs []kafka.Message
	for v := range 1500 {
		data, _ := snapshot.EncodeAnnouncement(snapshot.Announcement{Name: "b", Version: uint64(v + 1)})
		msgs = append(msgs, kafka.Message{Key: []byte("b"), Value: data})
	}
	msgs = append(msgs, kafka.Message{Key: []byte("a"), Value: []byte("not json")})
	if err := bulk.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}

	var got []string
	skipped, err := conn.ReadAnnouncements(ctx, "versions", "a", func(a snapshot.Announcement) {
		got = append(got, fmt.Sprintf("%v:%d", a.Stamp(), a.Window))
	})
	if err != nil || skipped != 1 || fmt.Sprint(got) != "[e0/v1:10 e0/v2:20 e2/v3:30 e1/v9:90]" {
		t.Fatalf("announcements of a: %v, %d skipped, err %v", got, skipped, err)
	}
	epoch, version, found, err := conn.NewestAnnounced(ctx, "versions", "a")
	if err != nil || !found || epoch != 2 || version != 9 {
		t.Fatalf("newest of a: epoch %d, version %d, found %v, err %v; want 2 and 9", epoch, version, found, err)
	}
	if _, version, _, err := conn.NewestAnnounced(ctx, "versions", "b"); err != nil || version != 1500 {
		t.Fatalf("newest of b: version %d, err %v", version, err)
	}
}

// BenchmarkAnnounce measures what an announcement adds to a solve: one
// record of some 200 bytes written and acknowledged by every in-sync
// replica of the embedded cluster, on loopback.
func BenchmarkAnnounce(b *testing.B) {
	ctx := context.Background()
	conn := announceCluster(b, ctx)
	w := NewAnnouncementWriter(conn, "versions")
	defer w.Close()
	a := snapshot.Announcement{Name: "default", Epoch: 3, CreatedAt: time.Now().UTC(), Algorithm: "tsvm",
		Window: 20000, Labeled: 1000, Objective: 1234.5678, Origin: snapshot.OriginSolve}
	for i := 0; b.Loop(); i++ {
		a.Version = uint64(i + 1)
		if err := w.Announce(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
	data, _ := snapshot.EncodeAnnouncement(a)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/announcement")
	b.ReportMetric(float64(len(data)), "bytes/record")
}
