package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamer/brokers"
	"streamer/config"
	"streamer/internal/testlevel"
	"streamer/pipeline"
	"streamer/snapshot"
	"streamer/synth"
)

// TestRestoreRefusesCorruptSnapshot puts a newer but corrupt snapshot on the
// topic and a corrupt snapshot file in place: the service refuses both with
// a clear error and restores the newest good snapshot.
func TestRestoreRefusesCorruptSnapshot(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs)
	svc, stop := runService(t, cfg)
	stream := newStreamWriter(t, addrs, 8)
	stream.write(t, ctx, 400)
	waitFor(t, "a snapshot", 30*time.Second, func() bool { return svc.Status().Snapshots > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	conn := testConnection(t, cfg.Brokers(), addrs)
	good, ok, _, err := conn.ReadSnapshots(ctx, "model-snapshots", "default")
	if err != nil || !ok {
		t.Fatalf("no snapshot on the topic: %v", err)
	}
	bad := bytes.Clone(good.Data)
	bad[len(bad)/2] ^= 0xff
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: "model-snapshots", RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: newTestTransport(t)}
	defer w.Close()
	for _, r := range snapshot.Split("default", snapshot.Stamp{Version: good.Version + 1}, bad, 1<<20) {
		msg := kafka.Message{Key: []byte(r.Key), Value: r.Value}
		for k, v := range r.Headers {
			msg.Headers = append(msg.Headers, kafka.Header{Key: k, Value: []byte(v)})
		}
		// kafka-go's transport may answer from metadata it cached before
		// the service created the topic: retry until the deadline.
		waitFor(t, "the corrupt snapshot written", 20*time.Second, func() bool {
			err := w.WriteMessages(ctx, msg)
			if err != nil && !errors.Is(err, kafka.UnknownTopicOrPartition) && !strings.Contains(err.Error(), "Unknown Topic Or Partition") {
				t.Fatal(err)
			}
			return err == nil
		})
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

// TestRestoreContinuesMetricsAndSkipsTheSameSolve stops a service whose
// model was solved on its whole window and starts it again: the window and
// prequential metrics read as before at once, the prequential scores
// continue, and no solve runs until something new arrives. With three
// classes, auto's window is rebuilt plain and grows its kNN graph at the
// first trigger, over the same rows.
func TestRestoreContinuesMetricsAndSkipsTheSameSolve(t *testing.T) {
	testlevel.Long(t, "restores three services in turn")
	three := []string{"news", "sport", "music"}
	for name, c := range map[string]struct {
		classes []string
		// refusedLast ends each input topic with a record that goes to the
		// dead letters: it was read, so the window is still the snapshot's.
		refusedLast bool
	}{
		"two classes":                 {},
		"three classes":               {classes: three},
		"dead letters last":           {refusedLast: true},
		"three classes, dead letters": {classes: three, refusedLast: true},
	} {
		t.Run(name, func(t *testing.T) { testRestoreSkipsTheSameSolve(t, c.classes, c.refusedLast) })
	}
}

func testRestoreSkipsTheSameSolve(t *testing.T, classes []string, refusedLast bool) {
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs)
	svc, stop := runService(t, cfg)
	stream := newStreamWriter(t, addrs, 12)
	stream.gen = synth.NewTextStream(synth.TextStreamConfig{Seed: 12, Topics: 2, Classes: classes})
	stream.write(t, ctx, 400)
	waitFor(t, "a model", 30*time.Second, func() bool { return svc.Status().Pipeline.ModelVersion > 0 })
	stream.write(t, ctx, 400)
	var refused int64
	if refusedLast {
		refused = 2
		err := stream.w.WriteMessages(ctx,
			kafka.Message{Topic: "examples", Key: []byte("bad"), Value: []byte("not json")},
			kafka.Message{Topic: "labels", Key: []byte("bad"), Value: []byte(`{"id": "bad"}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every example and label read, every example handed to the learner in
	// the window, and solved: else the stop leaves the window changed (a
	// label read late, rows of the hand-off queue dropped) and the restart
	// rightly solves again.
	waitFor(t, "every example and label, in the window and solved", 30*time.Second, func() bool {
		st := svc.Status().Pipeline
		if st.Examples < 800 || st.Labels < int64(stream.labels) || st.SSL.Total == 0 || st.ModelVersion == 0 || svc.Status().DeadLetters < refused {
			return false
		}
		learner := svc.Pipeline().Learner()
		return learner.Flush(ctx) == nil && !learner.Changed()
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	before := svc.Status().Pipeline
	conn := testConnection(t, cfg.Brokers(), addrs)
	last, err := newestSnapshot(ctx, conn)
	if err != nil || last.Version != before.ModelVersion {
		t.Fatalf("the last snapshot: version %d, %v; stopped at version %d", last.Version, err, before.ModelVersion)
	}

	svc2, stop2 := runService(t, cfg)
	<-svc2.Started()
	after := svc2.Status().Pipeline
	if after.ModelVersion != before.ModelVersion || after.Window != before.Window {
		t.Fatalf("restored version %d window %d, stopped at %d and %d", after.ModelVersion, after.Window, before.ModelVersion, before.Window)
	}
	if after.SSL.Total != before.SSL.Total || after.SSL.Correct != before.SSL.Correct || after.SSLRecent.Accuracy() != before.SSLRecent.Accuracy() {
		t.Fatalf("prequential scores restored as %+v (recent %v), stopped at %+v (recent %v)", after.SSL, after.SSLRecent.Accuracy(), before.SSL, before.SSLRecent.Accuracy())
	}
	if got := gauge(t, svc2, "streamer_window_examples"); got != float64(before.Window) {
		t.Fatalf("streamer_window_examples %v after the restore, want %d", got, before.Window)
	}
	if got := gauge(t, svc2, "streamer_prequential_accuracy_ratio"); got != before.SSLRecent.Accuracy() {
		t.Fatalf("streamer_prequential_accuracy_ratio %v after the restore, want %v", got, before.SSLRecent.Accuracy())
	}
	// Several solve intervals pass without a solve of the same window.
	for deadline := time.Now().Add(5 * cfg.Schedule.SolveInterval); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if v := svc2.Status().Pipeline.ModelVersion; v != before.ModelVersion {
			t.Fatalf("model version %d after a restore with nothing new, want %d", v, before.ModelVersion)
		}
	}
	stream.write(t, ctx, 100)
	waitFor(t, "a solve of the new examples", 30*time.Second, func() bool {
		return svc2.Status().Pipeline.ModelVersion > before.ModelVersion
	})
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	checkCountsGoOn(t, ctx, conn, last.Stats, svc2.Status().Pipeline)
}

// checkCountsGoOn checks the newest snapshot of a process that restored
// one whose stream counts were before and stopped at st: its counts go on
// from before's, and it describes the window of the process's last solve.
func checkCountsGoOn(t *testing.T, ctx context.Context, conn *brokers.Connection, before snapshot.Stats, st pipeline.Stats) {
	t.Helper()
	snap, err := newestSnapshot(ctx, conn)
	if err != nil || snap.Version != st.ModelVersion {
		t.Fatalf("the newest snapshot: version %d, %v; stopped at version %d", snap.Version, err, st.ModelVersion)
	}
	got := snap.Stats
	want := snapshot.Stats{
		Examples: before.Examples + st.Examples, Labels: before.Labels + st.Labels,
		Predictions: before.Predictions + st.Predictions, Solves: before.Solves + st.Solves,
		WindowSize: st.LastSolve.Window, Labeled: st.LastSolve.Labeled, Objective: st.LastSolve.Objective,
		Accuracy: got.Accuracy,
	}
	if got != want || st.Examples == 0 || st.Solves == 0 {
		t.Fatalf("snapshot stats %+v after a restore from %+v, want %+v", got, before, want)
	}
}

// TestSeedModelIsOnlyRead starts a service on a fresh cluster from the
// snapshot file of another: it restores the seed, writes its own snapshots
// to snapshot.file, and leaves the seed as it was.
func TestSeedModelIsOnlyRead(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.snap")
	first := startCluster(t)
	cfg := testConfig(t, first.Addrs(), "snapshot.file="+seed)
	svc, stop := runService(t, cfg)
	newStreamWriter(t, first.Addrs(), 31).write(t, ctx, 400)
	waitFor(t, "a snapshot", 30*time.Second, func() bool { return svc.Status().Snapshots > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	seedBytes, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}
	seedSnap, err := snapshot.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}

	second := startCluster(t)
	own := filepath.Join(dir, "own.snap")
	cfg = testConfig(t, second.Addrs(), "model.seed_file="+seed, "snapshot.file="+own)
	svc2, stop2 := runService(t, cfg)
	<-svc2.Started()
	if v := svc2.Status().RestoredVersion; v != seedSnap.Version {
		t.Fatalf("restored version %d, the seed's is %d", v, seedSnap.Version)
	}
	newStreamWriter(t, second.Addrs(), 32).write(t, ctx, 200)
	waitFor(t, "a snapshot of its own", 30*time.Second, func() bool { return svc2.Status().Snapshots > 0 })
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(seed); !bytes.Equal(after, seedBytes) {
		t.Fatal("the seed file was written")
	}
	if _, err := snapshot.ReadFile(own); err != nil {
		t.Fatalf("snapshot.file: %v", err)
	}
	if _, err := config.Load("", []string{"model.seed_file=" + own, "snapshot.file=" + own}); err == nil || !strings.Contains(err.Error(), "model.seed_file") {
		t.Fatalf("seed file = snapshot.file: err = %v", err)
	}
}

// TestRebuildRangeSkipsWhatTheWindowEvicts: an examples partition is
// rebuilt from its snapshot's window start, but never from further back
// than window.max_examples records before where the rebuild ends (a
// sampled window spans more records than it holds); labels are rebuilt
// from their start.
func TestRebuildRangeSkipsWhatTheWindowEvicts(t *testing.T) {
	t.Parallel()
	svc, err := New(testConfig(t, []string{"127.0.0.1:1"}, "window.max_examples=100"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	snap := &snapshot.Snapshot{Offsets: []snapshot.Offset{
		{Topic: "examples", Partition: 0, WindowStart: 10, Next: 1000},
		{Topic: "examples", Partition: 1, WindowStart: 950, Next: 1000},
		{Topic: "labels", Partition: 0, WindowStart: 5, Next: 60},
	}}
	for _, tt := range []struct {
		topic     string
		partition int
		committed map[int]int64
		first     int64
		from, to  int64
	}{
		{"examples", 0, nil, 0, 900, 1000},
		{"examples", 0, map[int]int64{0: 1200}, 0, 1100, 1200},
		{"examples", 1, nil, 0, 950, 1000},
		{"examples", 1, nil, 970, 970, 1000},
		{"labels", 0, nil, 0, 5, 60},
	} {
		from, to := svc.rebuildRange(tt.topic, tt.partition, snap, tt.committed, tt.first)
		if from != tt.from || to != tt.to {
			t.Errorf("%s[%d] committed %v, first %d: rebuilds [%d, %d), want [%d, %d)", tt.topic, tt.partition, tt.committed, tt.first, from, to, tt.from, tt.to)
		}
	}
}

// TestRebuildKeepsTheNewestRowsOfEveryPartition restores a snapshot taken
// early (as after a crash, records were handled since): the rebuild reads
// more than the window holds, and the window must keep the newest rows of
// the stream, from every partition. Read one partition after the other,
// it kept only rows of the partition read last.
func TestRebuildKeepsTheNewestRowsOfEveryPartition(t *testing.T) {
	t.Parallel()
	for name, step := range map[string]time.Duration{"a millisecond apart": time.Millisecond, "one burst": 0} {
		t.Run(name, func(t *testing.T) { testRebuildKeepsTheNewestRows(t, step) })
	}
}

// testRebuildKeepsTheNewestRows writes the records after the early
// snapshot step apart: 0 gives them all one time, as a burst of a producer
// does within a millisecond.
func testRebuildKeepsTheNewestRows(t *testing.T, step time.Duration) {
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	early, last := filepath.Join(dir, "early.snap"), filepath.Join(dir, "last.snap")
	cfg := testConfig(t, addrs, "window.max_examples=100", "snapshot.file="+last)
	svc, stop := runService(t, cfg)
	stream := newStreamWriter(t, addrs, 14)
	stream.write(t, ctx, 100)
	waitFor(t, "a snapshot file", 30*time.Second, func() bool { _, err := os.Stat(last); return err == nil })
	raw, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(early, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	var msgs []kafka.Message
	for i := range 300 {
		d := stream.gen.Next()
		v := fmt.Appendf(nil, `{"id": %q, "text": %q}`, d.ID, d.Text)
		msgs = append(msgs, kafka.Message{Topic: "examples", Key: []byte(d.ID), Value: v, Time: at.Add(time.Duration(i) * step)})
	}
	if err := stream.w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every example", 30*time.Second, func() bool { return svc.Status().Pipeline.Examples == 400 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	svc2, _ := runService(t, testConfig(t, addrs, "window.max_examples=100", "snapshot.file="+early))
	<-svc2.Started()
	held := map[int]int64{}
	var total int64
	for _, p := range svc2.Pipeline().Positions() {
		if p.Topic == "examples" {
			held[p.Partition] = p.Next - p.Start
			total += p.Next - p.Start
		}
	}
	// The newest 100 of 300 records spread by their ids' hashes, or in
	// turn from each partition in a burst: some 50 a partition.
	if total != 100 || held[0] < 25 || held[1] < 25 {
		t.Fatalf("rebuilt window holds %v records of each partition, want the newest 100 of both", held)
	}
}

// TestRestoresAKernelModel: a service that learns over a kernel map
// (features.kernel rbf) restores its own snapshot, whose model has the
// map's dimension rather than the input's, and scores with it.
func TestRestoresAKernelModel(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t, addrs, "features.kernel=rbf", "features.landmarks=40")
	svc, stop := runService(t, cfg)
	stream := newStreamWriter(t, addrs, 41)
	stream.write(t, ctx, 400)
	waitFor(t, "a snapshot", 30*time.Second, func() bool { return svc.Status().Snapshots > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	before := svc.Status().Pipeline.ModelVersion

	svc2, stop2 := runService(t, cfg)
	<-svc2.Started()
	if v := svc2.Status().RestoredVersion; v == 0 || v > before {
		t.Fatalf("restored version %d, want the snapshot's (the model was at %d)", v, before)
	}
	if m := svc2.Pipeline().Learner().InForce().Model; m == nil || m.Map == nil || len(m.Map.Landmarks) != 40 {
		t.Fatalf("restored model %+v: want one with its kernel map of 40 landmarks", m)
	}
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
}
