package service

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"streamer/online"
	"streamer/online/train"
	"streamer/synth"
)

// TestFirstSolveIsPublished: with a snapshot cadence that would not publish
// for an hour, the first model a process solves is published at once (a
// scorer has no model until a snapshot exists), and the next solves wait
// for the cadence.
func TestFirstSolveIsPublished(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One algorithm: auto's choice changing would publish too.
	cfg := testConfig(t, addrs, "snapshot.every_solves=1000", "snapshot.every=1h", "solver.algorithm=tsvm")
	run := startService(t, cfg, testLogger(t))
	stream := newStreamWriter(t, addrs, 5)
	stream.write(t, ctx, 300)
	waitFor(t, "a first snapshot", time.Minute, func() bool { return run.svc.Status().Snapshots == 1 })
	for range 3 {
		solves := run.svc.Status().Pipeline.Solves
		stream.write(t, ctx, 200)
		waitFor(t, "another solve", time.Minute, func() bool { return run.svc.Status().Pipeline.Solves > solves })
	}
	if n := run.svc.Status().Snapshots; n != 1 {
		t.Fatalf("%d snapshots published before the cadence allowed a second", n)
	}
}

// TestSnapshotCadence: the first solve is published, then every third, or
// the first after a minute, or at once the first after a drift reaction,
// of other classes or of another algorithm; nothing before a solve.
func TestSnapshotCadence(t *testing.T) {
	start := time.Unix(0, 0)
	c := newSnapshotCadence(3, time.Minute, start)
	ab := modelShape{classes: []string{"a", "b"}, algorithm: train.SVM}
	abc := modelShape{classes: []string{"a", "b", "c"}, algorithm: train.SVM}
	abcSR := modelShape{classes: abc.classes, algorithm: train.SR}
	if c.due(start) {
		t.Fatal("due before any solve")
	}
	steps := []struct {
		shape   modelShape
		reacted bool
		at      time.Duration
		due     bool
	}{
		{ab, false, 1, true}, // the first
		{ab, false, 2, false},
		{ab, false, 3, false},
		{ab, false, 4, true},  // the third since
		{ab, true, 5, true},   // a drift reaction
		{abc, false, 6, true}, // a new class
		{abc, false, 7, false},
		{abcSR, false, 8, true}, // another algorithm
		{abcSR, false, 9, false},
		{abcSR, false, 70, true}, // a minute since
	}
	for i, st := range steps {
		now := start.Add(st.at * time.Second)
		c.solved(st.shape, st.reacted)
		if got := c.due(now); got != st.due {
			t.Fatalf("solve %d: due %v, want %v", i+1, got, st.due)
		}
		if st.due {
			c.published(st.shape, now)
		}
	}
}

// TestNewClassIsPublished: with a snapshot cadence that would not publish
// for an hour, a model that knows a class the last snapshot's did not is
// published at once: a scorer with the older model could never predict
// the class.
func TestNewClassIsPublished(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Without the drift watch: the labels of c contradict the model that
	// learned c as b, which could alarm and publish a reaction's model.
	// One algorithm: auto's choice changing would publish too.
	cfg := testConfig(t, addrs, "snapshot.every_solves=1000", "snapshot.every=1h", "drift.detectors=none", "solver.algorithm=svm")
	run := startService(t, cfg, testLogger(t))
	stream := newStreamWriter(t, addrs, 5)
	stream.gen = synth.NewTextStream(synth.TextStreamConfig{Seed: 5, Topics: 2, Classes: []string{"a", "b", "c"}})
	stream.relabel = func(l string) string { return strings.Replace(l, "c", "b", 1) } // c is not labeled yet
	stream.write(t, ctx, 300)
	waitFor(t, "a first snapshot", time.Minute, func() bool { return run.svc.Status().Snapshots == 1 })
	stream.relabel = nil
	stream.write(t, ctx, 300)
	waitFor(t, "a model of three classes", time.Minute, func() bool {
		return len(run.svc.Pipeline().Learner().InForce().Model.Classes) == 3
	})
	waitFor(t, "its snapshot", 30*time.Second, func() bool { return run.svc.Status().Snapshots == 2 })
	for range 2 {
		solves := run.svc.Status().Pipeline.Solves
		stream.write(t, ctx, 200)
		waitFor(t, "another solve", time.Minute, func() bool { return run.svc.Status().Pipeline.Solves > solves })
	}
	if n := run.svc.Status().Snapshots; n != 2 {
		t.Fatalf("%d snapshots published; want 2: the first solve's and the first of three classes'", n)
	}
}

// TestSolvedLogNamesTheVote: a solve's log line gives the neighbours'
// vote and the labeled edges behind it over a graph, also when the edges
// deny the vote, and leaves them out of a solve without labeled edges or
// vote.
func TestSolvedLogNamesTheVote(t *testing.T) {
	attrs := func(rep online.SolveReport) map[string]any {
		a := solvedAttrs(rep, 0.01, 0.9)
		m := make(map[string]any, len(a)/2)
		for i := 0; i+1 < len(a); i += 2 {
			m[a[i].(string)] = a[i+1]
		}
		return m
	}
	for _, tt := range []struct {
		name string
		rep  online.SolveReport
		want map[string]any
	}{
		{"voting", online.SolveReport{VoteWeight: 0.5, LabeledEdges: 4, AgreeingEdges: 4},
			map[string]any{"vote_weight": 0.5, "labeled_edges": 4, "agreeing_edges": 4}},
		{"denied", online.SolveReport{LabeledEdges: 10, AgreeingEdges: 3},
			map[string]any{"vote_weight": 0.0, "labeled_edges": 10, "agreeing_edges": 3}},
		{"no graph", online.SolveReport{}, map[string]any{}},
	} {
		got := attrs(tt.rep)
		for _, k := range []string{"vote_weight", "labeled_edges", "agreeing_edges"} {
			want, ok := tt.want[k]
			if g, has := got[k]; has != ok || has && g != want {
				t.Errorf("%s: %s = %v (present %v), want %v (present %v)", tt.name, k, g, has, want, ok)
			}
		}
		if got["algorithm"] == nil || got["recent_accuracy"] != 0.9 {
			t.Errorf("%s: attributes %v lack the solve's", tt.name, got)
		}
	}
}

// TestSolvedLogNamesTheTrial checks that a solve's log line gives auto's
// trial, each candidate's record, as JSON names a user can read, and
// nothing where no trial ran.
func TestSolvedLogNamesTheTrial(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	rep := online.SolveReport{}
	rep.Algorithm = train.SVM
	rep.Trial = map[train.Algorithm]float64{train.LapSVM: 1.5, train.SR: 0.875, train.SVM: 2}
	log.Info("solved", solvedAttrs(rep, 0, 0)...)
	log.Info("solved", solvedAttrs(online.SolveReport{}, 0, 0)...)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"lapsvm": 1.5, "sr": 0.875, "svm": 2.0}
	if got, _ := first["trial"].(map[string]any); !maps.Equal(got, want) {
		t.Errorf("trial %v, want %v", first["trial"], want)
	}
	if _, ok := second["trial"]; ok {
		t.Errorf("a solve without a trial logs one: %v", second["trial"])
	}
}
