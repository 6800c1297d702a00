package online

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"streamer/anngraph"
	"streamer/online/model"
	"streamer/online/newton"
	"streamer/online/train"
	"streamer/synth"
	"streamer/vector"
)

type labeledRow struct {
	id    string
	v     vector.Vector
	class string
}

// textRows returns sparse text-like rows with class names.
func textRows(n int, seed uint64) []labeledRow {
	d := synth.GenerateSparseText(synth.SparseTextConfig{Rows: n, Dim: 1 << 16, NNZ: 30, Topics: 4, TopicWords: 300, Seed: seed})
	out := make([]labeledRow, n)
	for i, v := range d.Rows {
		c := "neg"
		if d.Labels[i] > 0 {
			c = "pos"
		}
		out[i] = labeledRow{id: fmt.Sprint("ex", i), v: v, class: c}
	}
	return out
}

// observeEveryFifth observes rows in order, every fifth with the label
// label gives it and the others unlabeled.
func observeEveryFifth(l *Learner, rows []labeledRow, label func(labeledRow) string) {
	for i, r := range rows {
		var y string
		if i%5 == 0 {
			y = label(r)
		}
		l.Observe(r.id, time.Time{}, r.v, y)
	}
}

func newTestLearner(t *testing.T, algo train.Algorithm, window int) *Learner {
	t.Helper()
	cfg := LearnerConfig{
		Features:      1 << 16,
		Window:        anngraph.Config{MaxExamples: window, K: 5, Seed: 1},
		Graph:         anngraph.LaplacianConfig{Normalized: true},
		Params:        train.Params{Algorithm: algo, Lambda: 1e-3, LambdaI: 0.1},
		SolveExamples: 100,
		SolveLabels:   10,
	}
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLearnerLearnsAndPredicts(t *testing.T) {
	for _, algo := range []train.Algorithm{train.SVM, train.TSVM, train.LapSVM} {
		t.Run(string(algo), func(t *testing.T) {
			l := newTestLearner(t, algo, 400)
			rows := textRows(600, 1)
			ts := time.Unix(0, 0)
			if _, _, _, ok := l.Predict(rows[0].v); ok {
				t.Fatal("a prediction before any model")
			}
			solves := 0
			correct, scored := 0, 0
			for i, r := range rows {
				if pred, m, _, ok := l.Predict(r.v); ok {
					scored++
					if m.Classes[pred.Class] == r.class {
						correct++
					}
				}
				label := ""
				if i%10 == 0 {
					label = r.class
				}
				if _, err := l.Observe(r.id, ts.Add(time.Duration(i)*time.Second), r.v, label); err != nil {
					t.Fatal(err)
				}
				if l.Due() {
					// The first labels make solves due before a second
					// class is labeled.
					_, err := l.Solve(context.Background())
					if errors.Is(err, train.ErrOneClass) {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					solves++
				}
			}
			if n, labeled := l.WindowSize(); n != 400 || labeled != 40 {
				t.Fatalf("window %d examples, %d labeled; want 400, 40", n, labeled)
			}
			version := l.InForce().Stamp.Version
			if version != uint64(solves) || solves < 5 {
				t.Fatalf("model version %d after %d solves", version, solves)
			}
			if acc := float64(correct) / float64(scored); acc < 0.8 {
				t.Fatalf("prequential accuracy %.3f over %d", acc, scored)
			}
		})
	}
}

func TestLearnerSkipsUnchangedSolve(t *testing.T) {
	l := newTestLearner(t, train.SVM, 100)
	if _, err := l.Solve(context.Background()); !errors.Is(err, ErrUnchanged) {
		t.Fatalf("empty learner: err = %v", err)
	}
	rows := textRows(50, 2)
	for _, r := range rows {
		l.Observe(r.id, time.Time{}, r.v, "")
	}
	if _, err := l.Solve(context.Background()); !errors.Is(err, newton.ErrNoLabels) && !errors.Is(err, train.ErrOneClass) {
		t.Fatalf("no labels: err = %v", err)
	}
	l.Label(rows[0].id, "a")
	l.Label(rows[1].id, "b")
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Solve(context.Background()); !errors.Is(err, ErrUnchanged) {
		t.Fatalf("second solve: err = %v, want ErrUnchanged", err)
	}
	if l.Label("nobody", "a") {
		t.Fatal("labelled an example that is not in the window")
	}
	l.Label(rows[1].id, "b") // same label: no change
	if _, err := l.Solve(context.Background()); !errors.Is(err, ErrUnchanged) {
		t.Fatalf("after a repeated label: err = %v, want ErrUnchanged", err)
	}
}

// TestLearnerSkipsWindowWithoutLabels: once every labeled example has
// left the window, a solve is skipped with ErrNoLabels and the model in
// force stays; a label that arrives again lets the next solve run.
func TestLearnerSkipsWindowWithoutLabels(t *testing.T) {
	l := newTestLearner(t, train.TSVM, 60)
	rows := textRows(200, 4)
	observeEveryFifth(l, rows[:60], func(r labeledRow) string { return r.class })
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[60:120] {
		l.Observe(r.id, time.Time{}, r.v, "")
	}
	rep, err := l.Solve(context.Background())
	if !errors.Is(err, newton.ErrNoLabels) || rep.Window != 60 || rep.Labeled != 0 {
		t.Fatalf("window of unlabeled rows: %+v, err = %v; want 60 rows, none labeled, ErrNoLabels", rep, err)
	}
	if cur := l.InForce(); !cur.Model.Ready() || cur.Stamp.Version != 1 {
		t.Fatalf("after the skip: model ready %v, version %d; want the first model in force", cur.Model.Ready(), cur.Stamp.Version)
	}
	l.Label(rows[100].id, rows[100].class)
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatalf("after a new label: %v", err)
	}
	if version := l.InForce().Stamp.Version; version != 2 {
		t.Fatalf("model version %d after a new label, want 2", version)
	}
}

// TestModelSolvedOnIsTheSolvesWindow: the model in force says what it was
// solved on, however the window grew since, and a restored model keeps
// what it is given.
func TestModelSolvedOnIsTheSolvesWindow(t *testing.T) {
	l := newTestLearner(t, train.SVM, 100)
	rows := textRows(90, 7)
	observeEveryFifth(l, rows[:50], func(r labeledRow) string { return r.class })
	rep, err := l.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[50:] {
		l.Observe(r.id, time.Time{}, r.v, r.class)
	}
	cur := l.InForce()
	m, version, on := cur.Model, cur.Stamp.Version, cur.SolvedOn
	want := model.SolvedOn{Window: 50, Labeled: 10, Objective: rep.Objective}
	if version != 1 || on != want || rep.Objective <= 0 {
		t.Fatalf("model %d solved on %+v, want version 1 and %+v", version, on, want)
	}
	if n, labeled := l.WindowSize(); n != 90 || labeled != 50 {
		t.Fatalf("window of %d rows, %d labeled; want 90 and 50", n, labeled)
	}
	// A labeled row admitted but still queued for the window (as Run's
	// hand-off holds it) is not in the window yet.
	l.mu.Lock()
	l.admit("queued", l.nextKey, rows[0].class)
	l.mu.Unlock()
	if n, labeled := l.WindowSize(); n != 90 || labeled != 50 || !l.Contains("queued") {
		t.Fatalf("with a labeled row queued: window of %d rows, %d labeled; want 90 and 50", n, labeled)
	}
	restored := model.SolvedOn{Window: 7, Labeled: 3, Objective: 0.5}
	l.SetModel(Solved{Model: m, Stamp: model.Stamp{Epoch: 2, Version: 9}, SolvedOn: restored})
	if cur := l.InForce(); cur.Stamp.Version != 9 || cur.SolvedOn != restored {
		t.Fatalf("restored model %d solved on %+v, want 9 and %+v", cur.Stamp.Version, cur.SolvedOn, restored)
	}
}

// TestLearnerSkipsOneClass: before any model, a window whose labels name
// one class is skipped with ErrOneClass; a second class lets it solve.
func TestLearnerSkipsOneClass(t *testing.T) {
	l := newTestLearner(t, train.SVM, 60)
	rows := textRows(60, 6)
	observeEveryFifth(l, rows, func(labeledRow) string { return "only" })
	rep, err := l.Solve(context.Background())
	if !errors.Is(err, train.ErrOneClass) || rep.Labeled != 12 {
		t.Fatalf("labels of one class: %+v, err = %v; want 12 labeled, ErrOneClass", rep, err)
	}
	l.Label(rows[1].id, "other")
	if _, err := l.Solve(context.Background()); err != nil {
		t.Fatalf("after a second class: %v", err)
	}
}

func TestLearnerEvictsAndForgets(t *testing.T) {
	l := newTestLearner(t, train.SVM, 10)
	rows := textRows(15, 3)
	var evicted []string
	for _, r := range rows {
		ev, err := l.Observe(r.id, time.Time{}, r.v, r.class)
		if err != nil {
			t.Fatal(err)
		}
		evicted = append(evicted, ev...)
	}
	if len(evicted) != 5 || evicted[0] != "ex0" || evicted[4] != "ex4" {
		t.Fatalf("evicted %v", evicted)
	}
	if l.Contains("ex0") || !l.Contains("ex14") {
		t.Fatal("window membership is wrong")
	}
	if _, labeled := l.WindowSize(); labeled != 10 {
		t.Fatalf("%d labels kept for 10 examples", labeled)
	}
	// A redelivered example is not added twice.
	if ev, err := l.Observe("ex14", time.Time{}, rows[14].v, ""); err != nil || len(ev) != 0 {
		t.Fatalf("redelivery: evicted %v, err %v", ev, err)
	}
}

// TestLearnerConcurrentObserveAndSolve runs ingestion, scoring and solves at
// once; run it with -race.
func TestLearnerConcurrentObserveAndSolve(t *testing.T) {
	l := newTestLearner(t, train.LapSVM, 300)
	rows := textRows(1200, 4)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := l.Solve(ctx); err != nil && !errors.Is(err, ErrUnchanged) &&
				!errors.Is(err, newton.ErrNoLabels) && !errors.Is(err, train.ErrOneClass) && !errors.Is(err, context.Canceled) {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		defer cancel()
		for i, r := range rows {
			l.Predict(r.v)
			label := ""
			if i%7 == 0 {
				label = r.class
			}
			if _, err := l.Observe(r.id, time.Time{}, r.v, label); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	if v := l.InForce().Stamp.Version; v == 0 {
		t.Fatal("no solve finished")
	}
}

func TestLearnerKeepsOneKindOfVector(t *testing.T) {
	l := newTestLearner(t, train.SVM, 10)
	if _, err := l.Observe("a", time.Time{}, vector.Sparse([]int32{1, 5}, []float64{1, 1}), ""); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]vector.Vector{
		"dense among sparse": vector.Dense([]float64{1, 2}),
		"index too large":    vector.Sparse([]int32{1 << 16}, []float64{1}),
	} {
		if _, err := l.Observe(name, time.Time{}, v, ""); !errors.Is(err, ErrIncompatible) {
			t.Errorf("%s: err = %v, want ErrIncompatible", name, err)
		}
	}
	d := newTestLearner(t, train.SVM, 10)
	d.Observe("a", time.Time{}, vector.Dense([]float64{1, 2, 3}), "")
	if _, err := d.Observe("b", time.Time{}, vector.Dense([]float64{1, 2}), ""); !errors.Is(err, ErrIncompatible) {
		t.Errorf("dense of another length: err = %v", err)
	}
}

// TestLearnerPin pins the first model while the learner goes on solving:
// it scores with the pinned one, solves from the newest, and scores with
// the newest again once unpinned.
func TestLearnerPin(t *testing.T) {
	l := newTestLearner(t, train.SVM, 400)
	rows := textRows(400, 2)
	ts := time.Unix(0, 0)
	observe := func(rs []labeledRow) {
		for i, r := range rs {
			if _, err := l.Observe(r.id, ts.Add(time.Duration(i)*time.Second), r.v, r.class); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Solve(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	observe(rows[:200])
	scoring := l.Scoring()
	first, st1 := scoring.Model, scoring.Stamp
	if st1.Epoch != 0 {
		t.Fatalf("solved as %v before any SetEpoch", st1)
	}
	l.Pin(Solved{Model: first, Stamp: st1})
	l.SetEpoch(4)
	observe(rows[200:])
	cur := l.InForce()
	newest, v2 := cur.Model, cur.Stamp.Version
	if v2 != st1.Version+1 || newest == first {
		t.Fatalf("pinned at %v, the learner reached version %d", st1, v2)
	}
	if st, ok := l.Pinned(); !ok || st != st1 {
		t.Fatalf("Pinned() = %v, %v; want %v", st, ok, st1)
	}
	differs := false
	for _, r := range rows {
		pred, m, st, ok := l.Predict(r.v)
		if !ok || m != first || st != st1 || pred.Scores[pred.Class] != first.Predict(r.v).Scores[pred.Class] {
			t.Fatalf("pinned: scored by %v (%v)", st, ok)
		}
		differs = differs || newest.Predict(r.v).Scores[0] != pred.Scores[0]
	}
	if !differs {
		t.Fatal("the newest model scores like the pinned one: the test cannot tell them apart")
	}
	l.Unpin()
	if _, ok := l.Pinned(); ok {
		t.Fatal("pinned after Unpin")
	}
	want := model.Stamp{Epoch: 4, Version: v2}
	if _, m, st, _ := l.Predict(rows[0].v); m != newest || st != want {
		t.Fatalf("unpinned: scored by %v, want %v", st, want)
	}
}

// TestWindowTooOldCounts gives the window, plain or a graph, rows in event
// times 0, 5, 20 and 3 seconds under a 10 s age: the last is refused on
// arrival and counted, and the count outlives the plain window that auto
// replaces by a graph once three classes are labeled.
func TestWindowTooOldCounts(t *testing.T) {
	for _, algo := range []train.Algorithm{train.SVM, train.LapSVM, train.Auto} {
		t.Run(string(algo), func(t *testing.T) {
			l, err := NewLearner(LearnerConfig{
				Features:      1 << 16,
				Window:        anngraph.Config{MaxExamples: 100, MaxAge: 10 * time.Second, K: 5, Seed: 1},
				Params:        train.Params{Algorithm: algo, Lambda: 1e-3, LambdaI: 0.1},
				SolveExamples: 100,
				SolveLabels:   10,
			})
			if err != nil {
				t.Fatal(err)
			}
			rows := textRows(8, 1)
			at := func(s int) time.Time { return time.Unix(1700000000+int64(s), 0) }
			for i, s := range []int{0, 5, 20, 3} {
				l.Observe(rows[i].id, at(s), rows[i].v, "")
			}
			if n, _ := l.WindowSize(); n != 1 || l.TooOldCount() != 1 {
				t.Fatalf("window of %d rows, %d too old; want 1 and 1", n, l.TooOldCount())
			}
			if algo != train.Auto {
				return
			}
			if _, plain := l.window.(*plainWindow); !plain {
				t.Fatal("auto started with a graph, not a plain window")
			}
			for i, y := range []string{"a", "b", "c"} {
				l.Observe(rows[4+i].id, at(21+i), rows[4+i].v, y)
			}
			if err := l.growGraph(); err != nil {
				t.Fatal(err)
			}
			if _, plain := l.window.(*plainWindow); plain || l.TooOldCount() != 1 {
				t.Fatalf("after the graph grew: plain %v, %d too old; want a graph and 1", plain, l.TooOldCount())
			}
		})
	}
}

// TestSolvesComeSoonerWhileTheWindowIsSmall: a solve is due after a tenth
// of the window's labels (at least one) or of its examples (at least
// earlyExamples), until those reach schedule's counts.
func TestSolvesComeSoonerWhileTheWindowIsSmall(t *testing.T) {
	l, err := NewLearner(LearnerConfig{
		Features: 4, Window: anngraph.Config{MaxExamples: 5000, Exhaustive: true},
		Params: train.Params{Algorithm: train.SVM}, SolveExamples: 500, SolveLabels: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	x := vector.Dense([]float64{1, 2, 3, 4})
	n := 0
	observe := func(label string) {
		if _, err := l.Observe(fmt.Sprint(n), time.Time{}, x, label); err != nil {
			t.Fatal(err)
		}
		n++
	}
	observe("a")
	if !l.Due() {
		t.Fatal("not due after the first label")
	}
	l.MarkSolved()
	for range 99 {
		observe("")
	}
	if l.Due() {
		t.Fatal("due after 99 unlabeled examples in a window of 100")
	}
	observe("")
	if !l.Due() {
		t.Fatal("not due after 100 new examples in a small window")
	}
	l.MarkSolved()
	for range 30 { // 30 labels in a window of 131: a tenth is 3
		observe("b")
	}
	l.MarkSolved()
	observe("a")
	observe("a")
	if l.Due() {
		t.Fatal("due after 2 new labels with 33 in the window")
	}
	observe("a")
	if !l.Due() {
		t.Fatal("not due after 3 new labels with 34 in the window")
	}
	l.MarkSolved()
	for range 2000 {
		observe("")
	}
	l.MarkSolved()
	for range 300 { // a tenth of 2,434 examples is 243
		observe("")
	}
	if !l.Due() {
		t.Fatal("not due after 300 examples in a window of 2,434")
	}
	l.MarkSolved()
	for range 5000 {
		observe("")
	}
	l.MarkSolved()
	for range 499 {
		observe("")
	}
	if l.Due() {
		t.Fatal("due after 499 examples: solve_examples bounds the wait")
	}
	observe("")
	if !l.Due() {
		t.Fatal("not due after solve_examples new examples")
	}
}

// TestVersionsAreAnnouncedBeforeTheyScore: each model a solve makes is
// announced before it is put in force, under a version after every one
// reserved (the versions a crashed process may have announced); a model
// whose announcement fails is dropped, the model in force stays, and its
// version is never taken again.
func TestVersionsAreAnnouncedBeforeTheyScore(t *testing.T) {
	l := newTestLearner(t, train.SVM, 400)
	rows := textRows(300, 4)
	observeEveryFifth(l, rows[:100], func(r labeledRow) string { return r.class })
	l.ReserveVersions(11)
	var announced []Announcement
	refuse := errors.New("brokers away")
	var fail bool
	l.SetAnnouncer(func(_ context.Context, a Announcement) error {
		if in := l.InForce().Stamp; in == a.Stamp {
			t.Errorf("version %v in force before it was announced", a.Stamp)
		}
		if fail {
			return refuse
		}
		announced = append(announced, a)
		return nil
	})
	l.SetEpoch(3)
	rep, err := l.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first := l.InForce()
	if rep.Version != 12 || first.Stamp != (model.Stamp{Epoch: 3, Version: 12}) || len(announced) != 1 ||
		announced[0].Stamp != first.Stamp || announced[0].SolvedOn != first.SolvedOn || announced[0].Algorithm != "svm" {
		t.Fatalf("first solve: version %d in force %+v, announced %+v", rep.Version, first.Stamp, announced)
	}

	fail = true
	observeEveryFifth(l, rows[100:200], func(r labeledRow) string { return r.class })
	if _, err := l.Solve(context.Background()); !errors.Is(err, ErrUnannounced) || !errors.Is(err, refuse) {
		t.Fatalf("solve while announcements fail: err = %v, want ErrUnannounced wrapping the announcer's", err)
	}
	if in := l.InForce(); in.Stamp != first.Stamp || in.Model != first.Model {
		t.Fatalf("an unannounced model is in force: %+v", in.Stamp)
	}
	if _, _, st, _ := l.Predict(rows[0].v); st != first.Stamp {
		t.Fatalf("an unannounced model scores: %+v", st)
	}

	fail = false
	rep, err = l.Solve(context.Background()) // the window counts as changed
	if err != nil {
		t.Fatal(err)
	}
	if rep.Version != 14 || l.InForce().Stamp.Version != 14 || len(announced) != 2 {
		t.Fatalf("after a dropped version 13: solved version %d, in force %v, %d announced", rep.Version, l.InForce().Stamp, len(announced))
	}

	// A restored model keeps its stamp, and solves go on after it.
	l.SetModel(Solved{Model: first.Model, Stamp: model.Stamp{Epoch: 3, Version: 20}, SolvedOn: first.SolvedOn})
	observeEveryFifth(l, rows[200:], func(r labeledRow) string { return r.class })
	if rep, err := l.Solve(context.Background()); err != nil || rep.Version != 21 {
		t.Fatalf("after a restore of version 20: version %d, err %v", rep.Version, err)
	}
}
