package brokers

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/snapshot"
)

// TestReadSnapshots writes two chunked versions of a model and a record
// that is no snapshot's to the snapshot topic, and reads them back: the
// newest complete one, one version by number, and a missing version.
func TestReadSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connectTestCluster(t, ctx, Topic{Name: "snaps", Compacted: true})
	if _, ok, _, err := conn.ReadSnapshots(ctx, "snaps", "m"); err != nil || ok {
		t.Fatalf("empty topic: ok %v, err %v", ok, err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: "snaps",
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	data := map[uint64][]byte{}
	msgs := []kafka.Message{{Key: []byte("junk"), Value: []byte("not a snapshot")}}
	var err error
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
	got, err := conn.ReadSnapshotVersion(ctx, "snaps", "m", snapshot.AnyEpochVersion(1))
	if err != nil || !bytes.Equal(got, data[1]) {
		t.Fatalf("version 1: %q, %v", got, err)
	}
	if _, err := conn.ReadSnapshotVersion(ctx, "snaps", "m", snapshot.AnyEpochVersion(3)); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("version 3: %v, want ErrNoSnapshot", err)
	}
}

// writeSnapshots writes snapshots of model m at the given versions to
// topic, chunked, and returns their encodings.
func writeSnapshots(t *testing.T, ctx context.Context, conn *Connection, topic string, versions ...uint64) map[uint64][]byte {
	t.Helper()
	var stamps []snapshot.Stamp
	for _, v := range versions {
		stamps = append(stamps, snapshot.Stamp{Version: v})
	}
	data := map[uint64][]byte{}
	for st, d := range writeStamps(t, ctx, conn, topic, stamps...) {
		data[st.Version] = d
	}
	return data
}

// writeStamps writes a snapshot of model m of each stamp to topic, and
// returns their encodings.
func writeStamps(t *testing.T, ctx context.Context, conn *Connection, topic string, stamps ...snapshot.Stamp) map[snapshot.Stamp][]byte {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(conn.Addrs...), Transport: conn.Transport, Topic: topic,
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	data := map[snapshot.Stamp][]byte{}
	var msgs []kafka.Message
	for _, st := range stamps {
		var err error
		if data[st], err = snapshot.Encode(&snapshot.Snapshot{Name: "m", Epoch: st.Epoch, Version: st.Version}); err != nil {
			t.Fatal(err)
		}
		for _, r := range snapshot.Split("m", st, data[st], 16) {
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
	return data
}

// TestVersionOfSeveralEpochs: two learners' terms both made a version 5.
// A selector of one epoch finds that one; a version of any epoch finds the
// newest epoch's, but a person naming it without an epoch
// (ResolveVersion) is told the epochs instead.
func TestVersionOfSeveralEpochs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connectTestCluster(t, ctx, Topic{Name: "history", Retention: time.Hour}, Topic{Name: "snaps", Compacted: true})
	e := func(epoch, version uint64) snapshot.Stamp { return snapshot.Stamp{Epoch: epoch, Version: version} }
	data := writeStamps(t, ctx, conn, "history", e(1, 5), e(2, 5), e(2, 6))
	maps.Copy(data, writeStamps(t, ctx, conn, "snaps", e(3, 7)))
	topics := []string{"history", "snaps", "missing"}

	for _, tc := range []struct {
		sel     snapshot.Selector
		want    snapshot.Stamp // of ResolveVersion
		wantErr error
		says    string
	}{
		{sel: snapshot.AnyEpochVersion(5), wantErr: ErrAmbiguousVersion, says: "epochs 1, 2"},
		{sel: snapshot.AnyEpochVersion(6), want: e(2, 6)},
		{sel: snapshot.AnyEpochVersion(7), want: e(3, 7)},
		{sel: snapshot.Exactly(e(1, 5)), want: e(1, 5)},
		{sel: snapshot.Exactly(e(2, 5)), want: e(2, 5)},
		{sel: snapshot.Exactly(e(3, 5)), wantErr: ErrNoSnapshot, says: "epochs 1, 2"},
		{sel: snapshot.AnyEpochVersion(9), wantErr: ErrNoSnapshot, says: "version 9"},
	} {
		got, err := conn.ResolveVersion(ctx, "m", tc.sel, topics...)
		if !errors.Is(err, tc.wantErr) || got != tc.want || (err != nil && !strings.Contains(err.Error(), tc.says)) {
			t.Errorf("ResolveVersion(%v) = %v, %v; want %v, %v saying %q", tc.sel, got, err, tc.want, tc.wantErr, tc.says)
		}
	}
	for _, tc := range []struct {
		sel  snapshot.Selector
		want snapshot.Stamp
	}{
		{snapshot.Exactly(e(1, 5)), e(1, 5)},
		{snapshot.Exactly(e(2, 5)), e(2, 5)},
		{snapshot.AnyEpochVersion(5), e(2, 5)}, // the newest epoch's
		{snapshot.Exactly(e(3, 7)), e(3, 7)},
	} {
		got, err := conn.FindSnapshotVersion(ctx, "m", tc.sel, topics...)
		if err != nil || !bytes.Equal(got, data[tc.want]) {
			t.Errorf("FindSnapshotVersion(%v): %v; want the snapshot of %v", tc.sel, err, tc.want)
		}
	}
	if _, err := conn.FindSnapshotVersion(ctx, "m", snapshot.Exactly(e(0, 5)), topics...); !errors.Is(err, ErrNoSnapshot) {
		t.Errorf("version 5 of epoch 0: %v, want ErrNoSnapshot", err)
	}
}

// TestSnapshotHistory keeps versions 1 to 4 on a history topic created
// with a retention, and the newest on the compacted topic: every version
// is found, the history topic's first, each is listed in order, and a
// missing topic or version is told apart.
func TestSnapshotHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connectTestCluster(t, ctx, Topic{Name: "history", Retention: 168 * time.Hour}, Topic{Name: "snaps", Compacted: true})
	if err := conn.EnsureTopics(ctx, Topic{Name: "bad", Retention: time.Hour, Compacted: true}); err == nil {
		t.Fatal("a compacted topic with a retention was created")
	}
	checkTopicConfig(t, ctx, conn, "history", map[string]string{"cleanup.policy": "delete", "retention.ms": "604800000"})
	history := writeSnapshots(t, ctx, conn, "history", 1, 2, 3, 4)
	newest := writeSnapshots(t, ctx, conn, "snaps", 5)

	var seen []uint64
	skipped, err := conn.EachSnapshot(ctx, "history", func(name string, c snapshot.Complete) {
		if name == "m" && bytes.Equal(c.Data, history[c.Version]) {
			seen = append(seen, c.Version)
		}
	})
	if err != nil || skipped != 0 || len(seen) != 4 || seen[0] != 1 || seen[3] != 4 {
		t.Fatalf("history listed %v, skipped %d, err %v", seen, skipped, err)
	}
	for v, want := range map[uint64][]byte{2: history[2], 5: newest[5]} {
		got, err := conn.FindSnapshotVersion(ctx, "m", snapshot.AnyEpochVersion(v), "missing", "history", "snaps")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("version %d: %v", v, err)
		}
	}
	if _, err := conn.FindSnapshotVersion(ctx, "m", snapshot.AnyEpochVersion(9), "history", "snaps"); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("version 9: %v, want ErrNoSnapshot", err)
	}
	entries, skipped, err := conn.SnapshotHistory(ctx, "m", "history", "snaps", "missing")
	if err != nil || skipped != 0 || len(entries) != 5 {
		t.Fatalf("history of m: %d entries, skipped %d, err %v", len(entries), skipped, err)
	}
	for i, e := range entries {
		if e.Version != uint64(i+1) || e.Name != "m" || e.Bytes == 0 {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if _, err := conn.EachSnapshot(ctx, "missing", func(string, snapshot.Complete) {}); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("a missing topic: %v, want ErrUnknownTopic", err)
	}
}

func checkTopicConfig(t *testing.T, ctx context.Context, conn *Connection, topic string, want map[string]string) {
	t.Helper()
	resp, err := conn.Client().DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{
		{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{"cleanup.policy", "retention.ms"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range resp.Resources {
		for _, e := range r.ConfigEntries {
			got[e.ConfigName] = e.ConfigValue
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("topic %s: %s = %q, want %q", topic, k, got[k], v)
		}
	}
}
