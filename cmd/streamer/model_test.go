package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"streamer/brokers"
	"streamer/publish"
	"streamer/service"
	"streamer/snapshot"
)

// publishVersions publishes snapshots of the default model: every version
// to the history topic, the last also to the snapshot topic.
func publishVersions(t *testing.T, ctx context.Context, conn *brokers.Connection, cfg service.Config, versions ...uint64) {
	t.Helper()
	history := publish.NewSnapshotWriter(conn, cfg.Snapshot.HistoryTopic, publish.WriterConfig{MaxMessageBytes: 1024})
	defer history.Close()
	snaps := publish.NewSnapshotWriter(conn, cfg.Kafka.Topics.Snapshots, publish.WriterConfig{MaxMessageBytes: 1024})
	defer snaps.Close()
	for i, v := range versions {
		snap := &snapshot.Snapshot{
			Name: "default", Version: v, CreatedAt: time.Unix(int64(v), 0).UTC(),
			Stats:    snapshot.Stats{Examples: int64(100 * v), WindowSize: 50},
			Progress: &snapshot.Progress{Prequential: snapshot.Prequential{Correct: int(v), Total: 10}},
		}
		data, err := snapshot.Encode(snap)
		if err != nil {
			t.Fatal(err)
		}
		if err := history.Publish(ctx, "default", snapshot.Stamp{Version: v}, data); err != nil {
			t.Fatal(err)
		}
		if i == len(versions)-1 {
			if err := snaps.Publish(ctx, "default", snapshot.Stamp{Version: v}, data); err != nil {
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

// TestModelListPinUnpin keeps versions 1 to 3 in the history and the
// newest on the snapshot topic: model list shows each once, pin marks one
// and refuses a version that is kept nowhere, replay finds an old version
// in the history and the pinned one on the control topic, unpin clears it.
func TestModelListPinUnpin(t *testing.T) {
	cluster, err := brokers.StartCluster(brokers.ClusterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	set := "kafka.brokers=" + cluster.Addrs()[0]
	cfg, err := service.LoadConfig("", []string{set})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := cfg.Brokers().Connect(cfg.Kafka.Brokers)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = conn.EnsureTopics(ctx, brokers.Topic{Name: cfg.Snapshot.HistoryTopic, Retention: time.Hour},
		brokers.Topic{Name: cfg.Kafka.Topics.Snapshots, Compacted: true})
	if err != nil {
		t.Fatal(err)
	}
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
