package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"streamer/brokers"
	"streamer/brokers/embedded"
	"streamer/config"
	"streamer/control"
	"streamer/publish"
	"streamer/snapshot"
)

// publishVersions publishes snapshots of the default model: every version
// to the history topic, the last also to the snapshot topic.
func publishVersions(t *testing.T, ctx context.Context, conn *brokers.Connection, cfg config.Config, versions ...uint64) {
	t.Helper()
	var stamps []snapshot.Stamp
	for _, v := range versions {
		stamps = append(stamps, snapshot.Stamp{Version: v})
	}
	publishStamps(t, ctx, conn, cfg, stamps...)
}

// publishStamps publishes snapshots of the default model of each stamp:
// all to the history topic, the last also to the snapshot topic.
func publishStamps(t *testing.T, ctx context.Context, conn *brokers.Connection, cfg config.Config, stamps ...snapshot.Stamp) {
	t.Helper()
	history := publish.NewSnapshotWriter(conn, cfg.Snapshot.HistoryTopic, publish.WriterConfig{MaxMessageBytes: 1024})
	defer history.Close()
	snaps := publish.NewSnapshotWriter(conn, cfg.Kafka.Topics.Snapshots, publish.WriterConfig{MaxMessageBytes: 1024})
	defer snaps.Close()
	for i, st := range stamps {
		v := st.Version
		snap := &snapshot.Snapshot{
			Name: "default", Epoch: st.Epoch, Version: v, CreatedAt: time.Unix(int64(v), 0).UTC(),
			Stats:    snapshot.Stats{Examples: int64(100 * v), WindowSize: 50},
			Progress: &snapshot.Progress{Prequential: snapshot.Prequential{Correct: int(v), Total: 10}},
		}
		data, err := snapshot.Encode(snap)
		if err != nil {
			t.Fatal(err)
		}
		if err := history.Publish(ctx, "default", st, data); err != nil {
			t.Fatal(err)
		}
		if i == len(stamps)-1 {
			if err := snaps.Publish(ctx, "default", st, data); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func listVersions(t *testing.T, set string) []versionRow {
	t.Helper()
	var rows []versionRow
	for _, line := range strings.Split(strings.TrimSpace(run(t, "model", "list", "--json", "--set", set)), "\n") {
		var r versionRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("model list printed %q: %v", line, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// modelCluster starts a broker with the default model's history,
// snapshot and versions topics, and returns the --set that names it.
func modelCluster(t *testing.T, ctx context.Context) (string, config.Config, *brokers.Connection) {
	t.Helper()
	cluster, err := embedded.Start(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	set := "kafka.brokers=" + cluster.Addrs()[0]
	cfg, err := config.Load("", []string{set})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := cfg.Brokers().Connect(cfg.Kafka.Brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	err = conn.EnsureTopics(ctx, brokers.Topic{Name: cfg.Snapshot.HistoryTopic, Retention: time.Hour},
		brokers.Topic{Name: cfg.Kafka.Topics.Snapshots, Compacted: true}, brokers.Topic{Name: cfg.Kafka.Topics.Versions})
	if err != nil {
		t.Fatal(err)
	}
	return set, cfg, conn
}

// TestModelPinByEpoch: the learners of epochs 1 and 2 both made a version
// 2. pin --version 2 refuses and names both epochs; --epoch chooses, and
// the order on the control topic carries the epoch; list marks that
// stamp only; replay --pinned loads it, and replay --snapshot-version
// obeys the same rule as pin. A version of one epoch is pinned without
// --epoch.
func TestModelPinByEpoch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set, cfg, conn := modelCluster(t, ctx)
	publishStamps(t, ctx, conn, cfg, snapshot.Stamp{Epoch: 1, Version: 1}, snapshot.Stamp{Epoch: 1, Version: 2},
		snapshot.Stamp{Epoch: 2, Version: 2}, snapshot.Stamp{Epoch: 2, Version: 3})

	_, err := runErr("model", "pin", "--version", "2", "--set", set)
	if err == nil || !strings.Contains(err.Error(), "epochs 1, 2") || !strings.Contains(err.Error(), "--epoch") {
		t.Fatalf("pin of a version of two epochs: %v", err)
	}
	if _, err := runErr("model", "pin", "--version", "2", "--epoch", "3", "--set", set); err == nil || !strings.Contains(err.Error(), "epochs 1, 2") {
		t.Fatalf("pin of a version of another epoch: %v", err)
	}
	if out := run(t, "model", "pin", "--version", "2", "--epoch", "1", "--set", set); !strings.Contains(out, "pinned to version 2 of epoch 1") {
		t.Fatalf("model pin --epoch 1 printed %q", out)
	}
	pins := control.NewFollower(conn, cfg.Kafka.Topics.Control, "default", nil)
	if err := pins.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if p := pins.Pin(); p.Epoch == nil || *p.Epoch != 1 || p.Version != 2 {
		t.Fatalf("the order on the control topic: %+v, want version 2 of epoch 1", p)
	}
	for _, r := range listVersions(t, set) {
		if r.Pinned != (r.Stamp() == snapshot.Stamp{Epoch: 1, Version: 2}) {
			t.Fatalf("model list marks %v pinned: %v", r.Stamp(), r.Pinned)
		}
	}
	for _, tc := range []struct {
		fl   replayFlags
		want snapshot.Stamp
	}{
		{replayFlags{pinned: true}, snapshot.Stamp{Epoch: 1, Version: 2}},
		{replayFlags{snapshotVersion: 2, snapshotEpoch: 2, epochGiven: true}, snapshot.Stamp{Epoch: 2, Version: 2}},
		{replayFlags{snapshotVersion: 2, epochGiven: true}, snapshot.Stamp{}}, // no version 2 of epoch 0
		{replayFlags{snapshotVersion: 2}, snapshot.Stamp{}},                   // two epochs
		{replayFlags{snapshotVersion: 1}, snapshot.Stamp{Epoch: 1, Version: 1}},
	} {
		snap, err := pinnedSnapshot(ctx, conn, cfg, tc.fl)
		if tc.want == (snapshot.Stamp{}) {
			if err == nil {
				t.Fatalf("replay %+v loaded %v", tc.fl, snap.Stamp())
			}
			continue
		}
		if err != nil || snap.Stamp() != tc.want {
			t.Fatalf("replay %+v: %v, want %v", tc.fl, err, tc.want)
		}
	}
	if out := run(t, "model", "pin", "--version", "3", "--set", set); !strings.Contains(out, "pinned to version 3 of epoch 2") {
		t.Fatalf("model pin --version 3 printed %q", out)
	}
}

// TestModelListPinUnpin keeps versions 1 to 3 in the history and the
// newest on the snapshot topic: model list shows each once, pin marks one
// and refuses a version that is kept nowhere, replay finds an old version
// in the history and the pinned one on the control topic, unpin clears it.
func TestModelListPinUnpin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set, cfg, conn := modelCluster(t, ctx)
	publishVersions(t, ctx, conn, cfg, 1, 2, 3)

	rows := listVersions(t, set)
	if len(rows) != 3 {
		t.Fatalf("model list: %d rows, want 3", len(rows))
	}
	for i, r := range rows {
		v := uint64(i + 1)
		if r.Version != v || r.Examples != int64(100*v) || r.Accuracy != float64(v)/10 || r.Window != 50 || r.Pinned {
			t.Fatalf("row %d: %+v", i, r)
		}
	}

	if out := run(t, "model", "pin", "--version", "2", "--set", set); !strings.Contains(out, "pinned to version 2") {
		t.Fatalf("model pin printed %q", out)
	}
	if _, err := runErr("model", "pin", "--version", "9", "--set", set); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Fatalf("pinning a version kept nowhere: %v", err)
	}
	table := run(t, "model", "list", "--set", set)
	for _, line := range strings.Split(table, "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), "pinned") != (len(strings.Fields(line)) > 1 && strings.Fields(line)[1] == "2") {
			t.Fatalf("model list marks the wrong version pinned:\n%s", table)
		}
	}

	for _, tc := range []struct {
		fl   replayFlags
		want uint64
	}{{replayFlags{snapshotVersion: 1}, 1}, {replayFlags{pinned: true}, 2}} {
		snap, err := pinnedSnapshot(ctx, conn, cfg, tc.fl)
		if err != nil || snap.Version != tc.want {
			t.Fatalf("replay's model: %v, want version %d", err, tc.want)
		}
	}

	if out := run(t, "snapshot", "inspect", "--topic", "--version", "1", "--set", set); !strings.Contains(out, "version") || !strings.Contains(out, "100 examples") {
		t.Fatalf("snapshot inspect --version 1 printed %q", out)
	}

	run(t, "model", "unpin", "--set", set)
	for _, r := range listVersions(t, set) {
		if r.Pinned {
			t.Fatalf("version %d pinned after unpin", r.Version)
		}
	}
	if _, err := pinnedSnapshot(ctx, conn, cfg, replayFlags{pinned: true}); err == nil {
		t.Fatal("replay --pinned succeeded with no pin")
	}
}

// TestModelListSaysWhenNoLabelScored: a version whose stream had scored no
// label shows no accuracy, where a 0.0000 would read as all wrong.
func TestModelListSaysWhenNoLabelScored(t *testing.T) {
	var b strings.Builder
	rows := []versionRow{
		{Known: snapshot.Known{Entry: snapshot.Entry{Version: 1}, Snapshot: true}},
		{Known: snapshot.Known{Entry: snapshot.Entry{Version: 2, Accuracy: 0.5, RecentAccuracy: 0.25, Scored: 4}, Snapshot: true}},
	}
	if err := printVersions(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if f := strings.Fields(lines[1]); f[9] != "-" || f[10] != "-" {
		t.Fatalf("version 1, nothing scored: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[9] != "0.5000" || f[10] != "0.2500" {
		t.Fatalf("version 2: %q", lines[2])
	}
}

// TestModelListAccountsForEveryAnnouncedVersion: versions announced and
// never snapshotted are listed with when and on what they were solved,
// as not pinnable; pin refuses one with a message that says why; a
// version with a snapshot and an announcement is one row, pinnable.
func TestModelListAccountsForEveryAnnouncedVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set, cfg, conn := modelCluster(t, ctx)
	publishStamps(t, ctx, conn, cfg, snapshot.Stamp{Version: 5})
	w := publish.NewAnnouncementWriter(conn, cfg.Kafka.Topics.Versions)
	defer w.Close()
	at := time.Date(2026, 11, 22, 23, 9, 11, 0, time.UTC)
	for v := uint64(5); v <= 7; v++ {
		a := snapshot.Announcement{Name: "default", Version: v, CreatedAt: at, Algorithm: "tsvm", Window: 5000 + 250*int(v-5),
			Labeled: 200 + int(v), Objective: 1.5, Origin: snapshot.OriginSolve}
		if err := w.Announce(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	rows := listVersions(t, set)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want versions 5 to 7: %+v", len(rows), rows)
	}
	for i, r := range rows {
		v := uint64(5 + i)
		if r.Version != v || !r.Announced || r.Snapshot != (v == 5) || r.Window != 5000+250*int(v-5) || r.Algorithm != "tsvm" || !r.CreatedAt.Equal(at) {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	out := run(t, "model", "list", "--set", set)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if f := strings.Fields(lines[3]); len(f) != 13 || f[1] != "7" || f[3] != "solve" || f[5] != "5500" || f[7] != "-" || f[12] != "no" {
		t.Errorf("version 7 listed as %q", lines[3])
	}
	_, err := runErr("model", "pin", "--version", "7", "--set", set)
	if err == nil || !strings.Contains(err.Error(), "version 7 of epoch 0 (made 2026-11-22T23:09:11Z by tsvm on a window of 5500, 207 labeled) has no snapshot") {
		t.Fatalf("pin of a version announced only: %v", err)
	}
	if out := run(t, "model", "pin", "--version", "5", "--set", set); !strings.Contains(out, "pinned to version 5") {
		t.Fatalf("pin of a version with a snapshot printed %q", out)
	}
}
