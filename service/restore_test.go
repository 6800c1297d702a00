package service

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/publish"
	"streamer/snapshot"
)

// TestRestoreRefusesCorruptSnapshot puts a newer but corrupt snapshot on the
// topic and a corrupt snapshot file in place: the service refuses both with
// a clear error and restores the newest good snapshot.
func TestRestoreRefusesCorruptSnapshot(t *testing.T) {
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs)
	svc, stop := runService(t, cfg)
	stream := newStreamWriter(addrs, 8)
	stream.write(t, ctx, 400)
	waitFor(t, "a snapshot", 30*time.Second, func() bool { return svc.Status().Snapshots > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	conn, err := cfg.Brokers().Connect(addrs)
	if err != nil {
		t.Fatal(err)
	}
	good, ok, _, err := publish.ReadSnapshots(ctx, conn, "model-snapshots", "default")
	if err != nil || !ok {
		t.Fatalf("no snapshot on the topic: %v", err)
	}
	bad := bytes.Clone(good.Data)
	bad[len(bad)/2] ^= 0xff
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: "model-snapshots", RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	for _, r := range snapshot.Split("default", good.Version+1, bad, 1<<20) {
		msg := kafka.Message{Key: []byte(r.Key), Value: r.Value}
		for k, v := range r.Headers {
			msg.Headers = append(msg.Headers, kafka.Header{Key: k, Value: []byte(v)})
		}
		if err := w.WriteMessages(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "model.snap")
	os.WriteFile(file, bad, 0o644)
	cfg.Snapshot.File = file

	var logs lockedBuffer
	run := startService(t, cfg, newTextLogger(&logs))
	svc2 := run.svc
	<-svc2.Started()
	if v := svc2.Status().RestoredVersion; v != good.Version {
		t.Fatalf("restored version %d, want the good %d", v, good.Version)
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"snapshot file refused", "checksum"} {
		if !bytes.Contains([]byte(logs.String()), []byte(want)) {
			t.Errorf("the log does not say %q:\n%.3000s", want, logs.String())
		}
	}
}
