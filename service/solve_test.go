package service

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"streamer/online"
	"streamer/online/train"
	"streamer/synth"
)

// TestFirstSolveIsPublished: with a snapshot cadence that would not publish
// for an hour, the first model a process solves is published at once (a
// scorer has no model until a snapshot exists), so is one that learned
// from twice the labels of the last snapshot's model or more (the first
// labels coming), and, once no labels come, the next solves wait for the
// cadence.
func TestFirstSolveIsPublished(t *testing.T) {
	t.Parallel()
	cluster := startCluster(t)
	addrs := cluster.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One algorithm: auto's choice changing would publish too. A window
	// that keeps every example: its labels stay when no more come.
	cfg := testConfig(t, addrs, "snapshot.every_solves=1000", "snapshot.every=1h", "solver.algorithm=tsvm", "window.max_examples=10000")
	run := startService(t, cfg, testLogger(t))
	stream := newStreamWriter(t, addrs, 5)
	stream.write(t, ctx, 100) // some 9 labels
	waitFor(t, "a first snapshot", time.Minute, func() bool { return run.svc.Status().Snapshots >= 1 })
	first := run.svc.Status().Snapshots
	stream.write(t, ctx, 300) // some 46
	steady := withoutLabels(t, ctx, run, stream)
	if steady == first {
		t.Fatalf("%d snapshots published, none after the labels grew fourfold", steady)
	}
	for range 3 {
		writeAndSolve(t, ctx, run, stream, 200)
	}
	if n := run.svc.Status().Snapshots; n != steady {
		t.Fatalf("%d snapshots published, %d when the labels stopped: the cadence allowed no more", n, steady)
	}
}

// withoutLabels stops the stream's labels and returns the snapshots
// published once every label written is learned: it writes examples that
// bring the labels still queued, waits for them to be read and for a
// model that learned from every label of the window, then writes more and
// waits for a newer model, so that any snapshot of that one is published.
func withoutLabels(t *testing.T, ctx context.Context, run *running, stream *streamWriter) int64 {
	t.Helper()
	stream.rate = math.MaxInt
	stream.write(t, ctx, 200)
	learner := run.svc.Pipeline().Learner()
	waitFor(t, "a model of every label", time.Minute, func() bool {
		st := run.svc.Status().Pipeline
		return st.Examples >= int64(stream.n) && st.Labels >= int64(stream.labels) &&
			learner.InForce().SolvedOn.Labeled == st.WindowLabeled
	})
	writeAndSolve(t, ctx, run, stream, 200)
	return run.svc.Status().Snapshots
}

// writeAndSolve writes n examples and waits until they are read and a
// model newer than the one in force when they were written is in force
// (the solve they trigger may end before they are all read). The solve
// loop publishes a model's snapshot, when it does, before it solves the
// next.
func writeAndSolve(t *testing.T, ctx context.Context, run *running, stream *streamWriter, n int) {
	t.Helper()
	learner := run.svc.Pipeline().Learner()
	version := learner.InForce().Stamp.Version
	stream.write(t, ctx, n)
	waitFor(t, "the examples read and a newer model", time.Minute, func() bool {
		return run.svc.Status().Pipeline.Examples >= int64(stream.n) && learner.InForce().Stamp.Version > version
	})
}

// TestSnapshotCadence: the first solve is published, then every third, or
// the first after a minute, or at once the first after a drift reaction,
// of other classes or of another algorithm; nothing before a solve.
func TestSnapshotCadence(t *testing.T) {
	start := time.Unix(0, 0)
	c := newSnapshotCadence(3, time.Minute, start)
	ab := modelShape{classes: []string{"a", "b"}, algorithm: train.SVM, labeled: 100}
	abc := modelShape{classes: []string{"a", "b", "c"}, algorithm: train.SVM, labeled: 100}
	abcSR := modelShape{classes: abc.classes, algorithm: train.SR, labeled: 100}
	labeled := func(m modelShape, n int) modelShape { m.labeled = n; return m }
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
		{abcSR, false, 70, true},               // a minute since
		{labeled(abcSR, 40), true, 71, true},   // a reaction that forgot labels
		{labeled(abcSR, 79), false, 72, false}, // fewer than twice the last's
		{labeled(abcSR, 80), false, 73, true},  // twice the last's
		{labeled(abcSR, 100), false, 74, false},
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
	// A window that keeps every example: its labels stay when no more
	// come, and a few more do not double them.
	cfg := testConfig(t, addrs, "snapshot.every_solves=1000", "snapshot.every=1h", "drift.detectors=none", "solver.algorithm=svm",
		"window.max_examples=10000")
	run := startService(t, cfg, testLogger(t))
	stream := newStreamWriter(t, addrs, 5)
	stream.gen = synth.NewTextStream(synth.TextStreamConfig{Seed: 5, Topics: 2, Classes: []string{"a", "b", "c"}})
	stream.relabel = func(l string) string { return strings.Replace(l, "c", "b", 1) } // c is not labeled yet
	stream.write(t, ctx, 400)
	waitFor(t, "a first snapshot", time.Minute, func() bool { return run.svc.Status().Snapshots >= 1 })
	steady := withoutLabels(t, ctx, run, stream)
	stream.relabel, stream.rate = nil, 8
	stream.write(t, ctx, 100)
	waitFor(t, "a model of three classes", time.Minute, func() bool {
		return len(run.svc.Pipeline().Learner().InForce().Model.Classes) == 3
	})
	waitFor(t, "its snapshot", 30*time.Second, func() bool { return run.svc.Status().Snapshots == steady+1 })
	if n := withoutLabels(t, ctx, run, stream); n != steady+1 {
		t.Fatalf("%d snapshots published; want %d: those of two classes and the first of three", n, steady+1)
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
